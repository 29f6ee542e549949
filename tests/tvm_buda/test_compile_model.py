"""compile_model end to end: PyTorch -> buda backend -> simulator, checked against PyTorch."""

import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import MLP, EmbeddingCumsum, bert_encoder, golden


def test_mlp_matches_pytorch():
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(4, 64)
    compiled = tvm_buda.compile_model(model, (x,))
    out = compiled.run(x)
    assert isinstance(out, torch.Tensor) and out.shape == (4, 32)
    assert_matches_golden(out, golden(model, x))
    assert compiled.device_ops().count("matmul") == 2
    assert "nn.relu" in compiled.device_ops()
    assert compiled.cpu_ops() == []


def test_bert_encoder_two_layers_matches_pytorch():
    encoder = bert_encoder(layers=2)
    x = torch.randn(1, 128, 768)
    compiled = tvm_buda.compile_model(encoder, (x,))
    out = compiled.run(x)
    out = out[0] if isinstance(out, tuple) else out
    assert_matches_golden(out, golden(encoder, x), "bert encoder")
    device = compiled.device_ops()
    for op in ("matmul", "nn.softmax", "nn.layer_norm", "nn.gelu"):
        assert op in device, op


def test_embedding_and_cumsum_stay_on_host():
    torch.manual_seed(0)
    model = EmbeddingCumsum().eval()
    ids = torch.randint(0, 100, (2, 7))
    compiled = tvm_buda.compile_model(model, (ids,))
    assert "take" in compiled.cpu_ops() and "cumsum" in compiled.cpu_ops()
    assert "take" not in compiled.device_ops() and "cumsum" not in compiled.device_ops()
    assert compiled.device_ops().count("matmul") == 2
    assert_matches_golden(compiled.run(ids), golden(model, ids))


def test_second_run_with_new_values_is_recomputed():
    torch.manual_seed(1)
    model = MLP().eval()
    compiled = tvm_buda.compile_model(model, (torch.randn(4, 64),))
    for _ in range(2):
        x = torch.randn(4, 64)
        assert_matches_golden(compiled.run(x), golden(model, x))


def test_wrong_input_shape_is_a_clear_error():
    model = MLP().eval()
    compiled = tvm_buda.compile_model(model, (torch.randn(4, 64),))
    with pytest.raises(ValueError, match=r"compiled for \(4, 64\)"):
        compiled.run(torch.randn(3, 64))
    with pytest.raises(TypeError, match="dtype"):
        compiled.run(torch.randn(4, 64, dtype=torch.float64))
    with pytest.raises(TypeError, match="expected 1 inputs"):
        compiled.run(torch.randn(4, 64), torch.randn(4, 64))


def test_unsupported_model_type_is_a_clear_error():
    with pytest.raises(TypeError, match="don't know how to compile"):
        tvm_buda.compile_model(object(), (torch.randn(1),))


@pytest.mark.parametrize("bad_id", [100, -1])
def test_out_of_range_token_ids_are_a_clear_error_not_a_crash(bad_id, monkeypatch):
    torch.manual_seed(0)
    model = EmbeddingCumsum().eval()
    ids = torch.randint(0, 100, (2, 7))
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    for _ in range(2):  # cold compile, then a warm cache hit: both keep the check
        compiled = tvm_buda.compile_model(model, (ids,))
        assert compiled.index_limits == {"ids": 100}
        bad = ids.clone()
        bad[1, 3] = bad_id
        with pytest.raises(ValueError, match=rf"input 'ids' holds index {bad_id} at position \(1, 3\).*100 rows"):
            compiled.run(bad)
        assert_matches_golden(compiled.run(ids), golden(model, ids))


@pytest.mark.parametrize("model, shapes", [(torch.nn.MSELoss(), [(3, 4), (3, 4)]), (torch.nn.Tanh(), [()])],
                         ids=["reducing_loss", "scalar_input"])
def test_zero_dim_results_keep_their_rank(model, shapes):
    """A 0-d result crosses the device boundary as 0-d (losses, scalar activations)."""
    torch.manual_seed(0)
    args = tuple(torch.randn(s) for s in shapes)
    compiled = tvm_buda.compile_model(model, args)
    out = compiled.run(*args)
    assert compiled.device_ops(), "the op should run on the device"
    assert out.shape == ()
    assert_matches_golden(out, model(*args))


class _ProductReadTwice(torch.nn.Module):
    """ONNX's addmm test: the product feeds a bias add and is read again (x@W + (x@W + b))."""

    def forward(self, x, w, b):
        p = x @ w
        return p + (p + b)


def test_fused_pattern_whose_inner_result_is_read_elsewhere_does_not_crash():
    torch.manual_seed(0)
    model, args = _ProductReadTwice(), (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4))
    compiled = tvm_buda.compile_model(model, args)
    assert compiled.cpu_ops() == []
    assert_matches_golden(compiled.run(*args), model(*args))


def test_a_model_wholly_on_the_device_runs_without_compiling_a_host_library(monkeypatch):
    # TVM's jit would compile and link the empty C module its VM linker adds, with the C compiler
    import tvm

    def no_c_compiler(*args, **kwargs):
        raise AssertionError("a host library was compiled and linked")

    monkeypatch.setattr(tvm.runtime.Executable, "export_library", no_c_compiler)
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(4, 64)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == []
    assert_matches_golden(compiled.run(x), golden(model, x))
    # with host kernels (the embedding and the cumulative sum) TVM's own route is kept: it runs too
    model, ids = EmbeddingCumsum().eval(), torch.randint(0, 100, (2, 16))
    compiled = tvm_buda.compile_model(model, (ids,))
    assert compiled.cpu_ops()
    assert_matches_golden(compiled.run(ids), golden(model, ids))
