"""FoldConstants returns exactly the module TVM's FoldConstant returns (it only skips lowering the
calls that cannot fold, and folds in numpy what numpy computes exactly), on real imported models
and on hand-written cases."""

import numpy as np
import pytest
import torch
import tvm
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.constant_eval import evaluate
from relay_passes.fold_constant import FoldConstants
from tvm_buda.demo_models import bert_encoder_hidden
from tvm_buda.frontends.dispatch import import_model


def _same_as_tvm(mod):
    expected = relax.transform.FoldConstant()(mod)
    assert tvm_ffi.structural_equal(FoldConstants()(mod), expected)
    return expected


def test_bert_with_safe_softmax_guard_matches_tvm():
    # full_like(x, 0) folds although x is a variable: TVM lowers it without reading x.
    model = bert_encoder_hidden(layers=1).eval()
    _same_as_tvm(import_model(model, (torch.randn(1, 32, 768),), "bert").mod)


def test_cnn_with_batch_norm_constants_matches_tvm():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
    mod = import_model(model, (torch.randn(1, 3, 16, 16),), "cnn").mod
    mod = relax.transform.DecomposeOpsForInference()(mod)
    _same_as_tvm(mod)


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((2, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            c = R.const(4.0, "float32")
            s = R.sqrt(c)
            t = R.astype(s, "float32")
            z = R.zeros(R.shape([2, 4]), "float32")
            y = R.add(R.multiply(x, t), z)
            R.output(y)
        return y


def test_chains_of_constants_fold_like_tvm():
    folded = _same_as_tvm(Chain)
    names = [b.value.op.name for b in folded["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    assert not {"relax.sqrt", "relax.zeros"} & set(names) and "relax.multiply" in names


def _constant_cases() -> dict:
    rng = np.random.default_rng(0)
    f32 = relax.const(rng.standard_normal((2, 3, 4)).astype("float32"))
    g32 = relax.const(rng.standard_normal((2, 3, 4)).astype("float32"))
    i64 = relax.const(rng.integers(-5, 5, (2, 3, 4)), "int64")
    three = relax.const(np.int64(3), "int64")
    mask = relax.const(rng.random((2, 3, 4)) > 0.5, "bool")
    op = relax.op
    return {
        "add": op.add(f32, g32), "subtract": op.subtract(i64, three), "multiply": op.multiply(f32, g32),
        "greater_equal": op.greater_equal(i64, three), "equal": op.equal(f32, g32), "less": op.less(f32, g32),
        "logical_and": op.logical_and(mask, mask), "logical_not": op.logical_not(mask),
        "where": op.where(mask, f32, g32), "where_inf": op.where(mask, relax.const(0.0), relax.const(-np.inf)),
        "astype_int32": op.astype(i64, "int32"), "astype_float16": op.astype(f32, "float16"),
        "astype_bool_float": op.astype(mask, "float32"), "astype_same": op.astype(f32, "float32"),
        "astype_scalar": op.astype(relax.const(2.0), "float16"),          # TVM leaves it: so do we
        "astype_float_int": op.astype(f32, "int32"),                      # left to TVM
        "divide": op.divide(f32, g32),                                    # left to TVM
        "reshape": op.reshape(f32, (6, 4)), "flatten": op.flatten(f32), "expand_dims": op.expand_dims(f32, [0, -1]),
        "squeeze": op.squeeze(op.expand_dims(f32, [0]), [0]), "permute_dims": op.permute_dims(f32, [2, 0, 1]),
        "transpose": op.permute_dims(f32), "broadcast_to": op.broadcast_to(three, (2, 3)),
        "strided_slice": op.strided_slice(f32, [1, 2], [1, -3], [3, 100], [1, 2]),
        "zeros": op.zeros((2, 3), "float32"), "ones": op.ones((3,), "int64"), "full": op.full((2, 2), relax.const(1.5)),
        "full_like": op.full_like(X, relax.const(0.0)), "zeros_like": op.zeros_like(X),
    }


X = relax.Var("x", relax.TensorType((2, 3, 4), "float32"))
CASES = _constant_cases()
LEFT_TO_TVM = {"astype_scalar", "astype_float_int", "divide"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_op_on_constants_folds_like_tvm(name):
    """Each op numpy folds gives TVM's constant bit for bit (the rest go to TVM's FoldConstant)."""
    builder = relax.BlockBuilder()
    with builder.function("main", [X]):
        with builder.dataflow():
            folded = builder.emit(CASES[name])
            out = builder.emit_output(relax.Tuple([X, folded]))
        builder.emit_func_output(out)
    mod = builder.get()
    assert (evaluate(mod["main"].body.blocks[0].bindings[0].value) is None) == (name in LEFT_TO_TVM)
    _same_as_tvm(mod)


def test_distilbert_attention_mask_folds_in_numpy_like_tvm(monkeypatch):
    # its mask chain (slice, cast, expand, compare, broadcast, where) was 16 LLVM builds, 0.5 s of compile
    from transformers import DistilBertConfig, DistilBertModel

    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=50, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=16)
    model = DistilBertModel(config).eval()
    mod = import_model(model, (torch.randint(0, 50, (1, 8)),), "distilbert").mod
    expected = relax.transform.FoldConstant()(mod)
    tvm_fold, sent = relax.transform.FoldConstant, []

    def recording():
        return lambda m: sent.append(m["main"].body.blocks[0].bindings[0].value.op.name) or tvm_fold()(m)

    monkeypatch.setattr(relax.transform, "FoldConstant", recording)
    assert tvm_ffi.structural_equal(FoldConstants()(mod), expected)
    assert sent == []   # nothing left for TVM's pass: an arange of literals is a constant at import


def test_a_large_shape_only_fill_stays_a_call_and_the_guard_still_goes(monkeypatch):
    """The safe-softmax guard's zeros (the attention scores' size, per layer) are not materialised
    when large (BERT-Large at batch 64: 604 MB each); SimplifySafeSoftmaxGuard replaces the call by
    a scalar as it does the folded constant, so the device program is the same."""
    import tvm_buda
    from relay_passes import fold_constant
    from relay_passes.safe_softmax_guard import SimplifySafeSoftmaxGuard

    torch.manual_seed(0)
    model = bert_encoder_hidden(layers=1).eval()
    x = torch.randn(2, 32, 768)
    mod = import_model(model, (x,), "bert").mod
    folded = FoldConstants()(mod)                         # (2 x 12 x 32 x 32 scores: under the limit)
    assert "R.full_like" not in folded.script()
    assert (2, 12, 32, 32) in _constants(folded)
    monkeypatch.setattr(fold_constant, "LARGE_FILL_BYTES", 1024)
    kept = FoldConstants()(mod)
    assert "R.full_like(" in kept.script()
    assert (2, 12, 32, 32) not in _constants(kept)
    assert "R.full_like(" not in SimplifySafeSoftmaxGuard()(kept).script()
    compiled = tvm_buda.compile_model(model, (x,), name="bert_large_fill")
    with torch.no_grad():
        golden = model(x)
    got = torch.as_tensor(np.asarray(compiled.run(x)))
    assert not [op for op in compiled.cpu_ops() if "full_like" in op]
    assert got.shape == golden.shape and torch.allclose(got, golden, atol=0.1 * float(golden.abs().max()))


def _constants(mod) -> list:
    """Shapes of the tensor constants the calls of `mod`'s main read."""
    return [tuple(a.ty.shape) for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, relax.Call) for a in b.value.args
            if isinstance(a, tvm.ir.Constant) and isinstance(a.ty, relax.TensorType)]
