"""FoldConstants returns exactly the module TVM's FoldConstant returns (it only skips lowering the
calls that cannot fold), on real imported models and on hand-written cases."""

import tvm_ffi
import torch
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

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
