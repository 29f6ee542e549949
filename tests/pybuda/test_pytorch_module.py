"""PyBuda-style API: PyTorchModule on a TTDevice, run_inference, output queue, Tensor conversions."""

import numpy as np
import pytest
import torch

import pybuda
from tests.helpers import assert_matches_golden
from tests.models import MLP, EmbeddingCumsum, bert_encoder, golden


def _run_on_tt(name, model, *inputs):
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule(name, model))
    output_q = pybuda.run_inference(inputs=[inputs])
    outputs = output_q.get()
    assert output_q.empty()
    return outputs


def test_mlp_through_run_inference():
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(4, 64)
    outputs = _run_on_tt("mlp", model, x)
    assert isinstance(outputs, list) and len(outputs) == 1
    out = outputs[0]
    as_torch = out.to_framework("pytorch")
    as_numpy = out.to_framework("numpy")
    assert isinstance(as_torch, torch.Tensor) and isinstance(as_numpy, np.ndarray)
    assert torch.equal(out.value(), as_torch)
    assert_matches_golden(as_torch, golden(model, x))
    pybuda.shutdown()


def test_bert_encoder_through_run_inference():
    encoder = bert_encoder(layers=2)
    x = torch.randn(1, 128, 768)
    outputs = _run_on_tt("bert_encoder", encoder, x)
    assert_matches_golden(outputs[0].to_framework("pytorch"), golden(encoder, x))


def test_embedding_cumsum_through_run_inference():
    torch.manual_seed(0)
    model = EmbeddingCumsum().eval()
    ids = torch.randint(0, 100, (2, 7))
    outputs = _run_on_tt("emb_cumsum", model, ids)
    assert_matches_golden(outputs[0].to_framework("numpy"), golden(model, ids).numpy())


def test_inputs_pushed_to_device_then_run():
    torch.manual_seed(0)
    model = MLP().eval()
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    xs = [torch.randn(4, 64) for _ in range(3)]
    for x in xs:
        tt0.push_to_inputs((x,))
    output_q = pybuda.run_inference(input_count=3)
    for x in xs:
        assert_matches_golden(output_q.get()[0].value(), golden(model, x))


def test_run_inference_without_device_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no device"):
        pybuda.run_inference(inputs=[(torch.randn(1),)])


def test_pytorch_module_rejects_non_torch_models():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        pybuda.PyTorchModule("bad", object())
