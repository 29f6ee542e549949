"""CPU fallback policy: fallback ops, PyBuda's closure rule, shared weights, TM fallback, strict mode."""

import numpy as np
import pytest
import torch
from tvm.script import ir as I
from tvm.script import relax as R

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import EmbeddingCumsum, golden
from tvm_buda.partition import UnsupportedOpError, relax_op_name

rng = np.random.default_rng(0)
W = {f"w{i}": (rng.standard_normal((32, 32)) / 6).astype(np.float32) for i in range(1, 5)}


@I.ir_module
class ForkJoin:
    @R.function
    def main(x: R.Tensor((8, 32), "float32"), w1: R.Tensor((32, 32), "float32"), w2: R.Tensor((32, 32), "float32"),
             w3: R.Tensor((32, 32), "float32"), w4: R.Tensor((32, 32), "float32")) -> R.Tensor((8, 32), "float32"):
        with R.dataflow():
            a = R.matmul(x, w1)
            b = R.nn.relu(a)
            c = R.matmul(b, w2)
            d = R.matmul(b, w3)
            e = R.add(c, d)
            f = R.matmul(e, w4)
            R.output(f)
        return f


def _fork_join_reference(x):
    b = np.maximum(x @ W["w1"], 0)
    return (b @ W["w2"] + b @ W["w3"]) @ W["w4"]


def _config(*fallback, **fields):
    cfg = tvm_buda.CompilerConfig(**fields)
    cfg.add_cpu_fallback_ops(list(fallback))
    return cfg


def test_op_names_accept_pybuda_and_relax_spellings():
    assert relax_op_name("embedding") == relax_op_name("take") == "relax.take"
    assert relax_op_name("gelu") == relax_op_name("nn.gelu") == relax_op_name("relax.nn.gelu") == "relax.nn.gelu"
    assert relax_op_name("cumsum") == "relax.cumsum"


def test_closure_takes_the_smaller_side_predecessors():
    x = rng.standard_normal((8, 32)).astype(np.float32)
    compiled = tvm_buda.build(ForkJoin, params=W, config=_config("relu"), name="fork")
    # relu has 1 predecessor (a) and 4 descendants (c, d, e, f): the predecessor moves with it.
    assert compiled.cpu_ops() == ["matmul", "nn.relu"]
    assert compiled.device_ops() == ["matmul", "matmul", "add", "matmul"]
    assert_matches_golden(compiled.run(x), _fork_join_reference(x))


def test_closure_takes_the_smaller_side_descendants():
    x = rng.standard_normal((8, 32)).astype(np.float32)
    compiled = tvm_buda.build(ForkJoin, params=W, config=_config("add"), name="fork")
    # add (the join) has 4 predecessors and 1 descendant (f): the descendant moves with it.
    assert compiled.cpu_ops() == ["add", "matmul"]
    assert compiled.device_ops() == ["matmul", "nn.relu", "matmul", "matmul"]
    assert_matches_golden(compiled.run(x), _fork_join_reference(x))


@I.ir_module
class TiedEmbedding:
    @R.function
    def main(ids: R.Tensor((6,), "int32"), w: R.Tensor((50, 32), "float32"),
             w1: R.Tensor((32, 32), "float32")) -> R.Tensor((6, 50), "float32"):
        with R.dataflow():
            h = R.take(w, ids, axis=0)
            g = R.matmul(h, w1)
            wt = R.permute_dims(w)
            logits = R.matmul(g, wt)
            R.output(logits)
        return logits


def test_ops_sharing_a_weight_with_a_fallback_op_follow_it():
    emb = rng.standard_normal((50, 32)).astype(np.float32)
    ids = np.array([1, 4, 9, 16, 25, 36], dtype=np.int32)
    compiled = tvm_buda.build(TiedEmbedding, params={"w": emb, "w1": W["w1"]}, name="tied")
    assert "take" in compiled.cpu_ops() and "permute_dims" in compiled.cpu_ops()
    assert compiled.device_ops().count("matmul") == 2
    assert_matches_golden(compiled.run(ids), (emb[ids] @ W["w1"]) @ emb.T)


@I.ir_module
class TMChain:
    @R.function
    def main(x: R.Tensor((2, 4, 32), "float32"), w: R.Tensor((32, 8), "float32")) -> R.Tensor((4, 2, 8), "float32"):
        with R.dataflow():
            a = R.reshape(x, R.shape([8, 32]))
            b = R.permute_dims(a, axes=[1, 0])
            c = R.reshape(b, R.shape([32, 2, 4]))
            d = R.permute_dims(c, axes=[2, 1, 0])
            e = R.matmul(d, w)
            R.output(e)
        return e


@pytest.mark.parametrize("depth, expected_host", [
    (1, ["reshape"]),
    (2, ["reshape", "permute_dims"]),
    (10, ["reshape", "permute_dims", "reshape", "permute_dims"]),
])
def test_tm_fallback_respects_max_depth(depth, expected_host):
    x = rng.standard_normal((2, 4, 32)).astype(np.float32)
    cfg = tvm_buda.CompilerConfig(enable_tm_cpu_fallback=True, tm_cpu_fallback_max_depth=depth)
    compiled = tvm_buda.build(TMChain, params={"w": W["w1"][:, :8]}, config=cfg, name="tm")
    assert compiled.cpu_ops() == expected_host
    assert "matmul" in compiled.device_ops()
    golden = np.transpose(x.reshape(8, 32).T.reshape(32, 2, 4), (2, 1, 0)) @ W["w1"][:, :8]
    assert_matches_golden(compiled.run(x), golden)


def test_tm_fallback_off_keeps_tms_on_device():
    compiled = tvm_buda.build(TMChain, params={"w": W["w1"][:, :8]}, name="tm")
    assert compiled.cpu_ops() == []


def test_fallback_disabled_is_an_error_naming_the_op():
    cfg = tvm_buda.CompilerConfig(enable_tvm_cpu_fallback=False)
    with pytest.raises(UnsupportedOpError, match=r"'take' \(binding .* in main"):
        tvm_buda.compile_model(EmbeddingCumsum(), (torch.randint(0, 100, (2, 7)),), config=cfg)


def test_fallback_op_in_the_middle_still_runs_and_matches():
    class Middle(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

        def forward(self, x):
            return self.b(torch.cumsum(torch.relu(self.a(x)), dim=1))

    torch.manual_seed(0)
    model, x = Middle().eval(), torch.randn(2, 5, 16)
    compiled = tvm_buda.compile_model(model, (x,))
    # cumsum has fewer descendants (the second linear) than predecessors: they go to the host with it
    assert "cumsum" in compiled.cpu_ops() and compiled.cpu_ops().count("matmul") == 1
    assert compiled.device_ops().count("matmul") == 1
    assert compiled.graph_breaks >= 1
    assert_matches_golden(compiled.run(x), golden(model, x))


def test_unsupported_op_in_the_middle_splits_the_device_graph():
    class Middle(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

        def forward(self, x):  # cumprod has no device kernel and is not a fallback op: no closure
            return self.b(torch.cumprod(torch.sigmoid(self.a(x)) + 0.5, dim=1))

    torch.manual_seed(0)
    model, x = Middle().eval(), torch.randn(2, 5, 16)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == ["cumprod"]
    assert compiled.device_ops().count("matmul") == 2
    kinds = [s.kind for s in compiled.partition_summary().steps]
    assert kinds == ["device", "host", "device"] and compiled.graph_breaks == 2
    assert_matches_golden(compiled.run(x), golden(model, x))
