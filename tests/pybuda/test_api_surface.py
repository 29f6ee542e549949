"""Names real PyBuda code uses beyond the API reference: pybuda._C, named-input mappings,
detect_available_devices, Tensor conversions, VerifyConfig and pybuda.verify."""

from collections import UserDict

import pytest
import torch
from transformers import BatchEncoding

import pybuda
from pybuda._C.backend_api import BackendDevice, BackendType, DeviceMode
from tests.helpers import assert_matches_golden


class MaskedPool(torch.nn.Module):
    """forward(input_ids, attention_mask): named like a Hugging Face model's arguments."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 32)
        self.proj = torch.nn.Linear(32, 16)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) * attention_mask.unsqueeze(-1).to(torch.float32)
        return self.proj(x).sum(dim=1)


def _tokens():
    torch.manual_seed(0)
    ids = torch.randint(0, 50, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    return ids, mask


def test_c_module_names_are_the_facade_objects():
    assert pybuda._C.DataFormat.Float16_b is pybuda.DataFormat.Float16_b
    assert pybuda._C.Float16_b is pybuda.DataFormat.Float16_b
    assert all(getattr(pybuda._C, m.name) is m for m in pybuda.DataFormat)
    assert pybuda._C.MathFidelity is pybuda.MathFidelity
    assert (BackendDevice, BackendType, DeviceMode) == (pybuda.BackendDevice, pybuda.BackendType, pybuda.DeviceMode)


def test_detect_available_devices_follows_device_config():
    devices = pybuda.detect_available_devices()
    assert devices == [pybuda.TTDevice("tt_default").arch]  # without device_config: a TTDevice's default arch
    pybuda.set_configuration_options(device_config="gs_e150")
    assert pybuda.detect_available_devices()[0] == BackendDevice.Grayskull
    pybuda.set_configuration_options(device_config="wh_n300")
    assert pybuda.detect_available_devices() == [BackendDevice.Wormhole_B0] * 2
    tt0 = pybuda.TTDevice("tt0", arch=pybuda.detect_available_devices()[0])
    assert tt0.arch is BackendDevice.Wormhole_B0


def test_tensor_create_from_torch_and_to_pytorch():
    x = torch.randn(3, 40)
    t = pybuda.Tensor.create_from_torch(x)
    assert torch.equal(t.to_pytorch(), x)
    rounded = pybuda.Tensor.create_from_torch(x, dev_data_format=pybuda._C.DataFormat.Bfp8_b)
    assert rounded.data_format is pybuda.DataFormat.Bfp8_b and not torch.equal(rounded.to_pytorch(), x)


@pytest.mark.parametrize("wrap", [dict, UserDict, lambda d: BatchEncoding(d)], ids=["dict", "UserDict", "BatchEncoding"])
def test_named_inputs_from_any_mapping(wrap):
    model = MaskedPool().eval()
    ids, mask = _tokens()
    inputs = wrap({"attention_mask": mask, "input_ids": ids})  # order differs from forward's
    out = pybuda.run_inference(pybuda.PyTorchModule("pool", model), inputs=[inputs]).get()[0]
    assert_matches_golden(out.to_pytorch(), model(ids, mask))


def test_a_key_the_forward_does_not_take_is_a_clear_error():
    ids, mask = _tokens()
    tokens = BatchEncoding({"input_ids": ids, "token_type_ids": torch.zeros_like(ids), "attention_mask": mask})
    with pytest.raises(TypeError, match=r"\['token_type_ids'\] are not arguments of MaskedPool.forward.*pop"):
        pybuda.run_inference(pybuda.PyTorchModule("pool", MaskedPool()), inputs=[tokens])


def test_push_to_inputs_takes_a_mapping():
    model = MaskedPool().eval()
    ids, mask = _tokens()
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("pool", model))
    tt0.push_to_inputs(BatchEncoding({"input_ids": ids, "attention_mask": mask}))
    out = pybuda.run_inference().get()[0]
    assert_matches_golden(out.value(), model(ids, mask))


def test_verify_module_passes_and_names_a_mismatch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).eval()
    cfg = pybuda.VerifyConfig(arch=BackendDevice.Wormhole_B0, devtype=BackendType.Golden,
                              test_kind=pybuda.verify.TestKind.INFERENCE, pcc=0.99)
    outputs = pybuda.verify.backend.verify_module(pybuda.PyTorchModule("mlp", model), ([4, 32],), verify_cfg=cfg)
    assert outputs[0].shape == (4, 8)
    never = pybuda.VerifyConfig(golden_compare_callback=lambda golden, out: False)
    with pytest.raises(pybuda.verify.VerificationError, match="mlp: output 0 does not match"):
        pybuda.verify.verify_module(pybuda.PyTorchModule("mlp", model), ([4, 32],), verify_cfg=never)


def test_verify_outputs_applies_pybudas_rule():
    golden = torch.linspace(-1, 1, 100)
    pybuda.verify.verify_outputs([golden + 0.05], [golden])  # within 0.1 * max|golden|
    with pytest.raises(pybuda.verify.VerificationError, match="pcc="):
        pybuda.verify.verify_outputs([-golden], [golden])


def test_verify_outputs_leaves_a_transformers_cache_out():
    """A model run with its config's default use_cache=True returns its key/value cache beside the
    logits; an inference import returns none, so the cache is not an output to compare."""
    from transformers import DynamicCache
    from transformers.modeling_outputs import SequenceClassifierOutputWithPast

    logits = torch.linspace(-1, 1, 12).reshape(3, 4)
    golden = SequenceClassifierOutputWithPast(logits=logits, past_key_values=DynamicCache())
    assert len(pybuda.verify.verify_outputs([logits], golden)) == 1
    with pytest.raises(pybuda.verify.VerificationError, match="pcc="):
        pybuda.verify.verify_outputs([-logits], golden)


def test_run_inference_accepts_a_verify_config():
    model = torch.nn.Linear(16, 4).eval()
    x = torch.randn(2, 16)
    out = pybuda.run_inference(pybuda.PyTorchModule("lin", model), inputs=[(x,)],
                               _verify_cfg=pybuda.VerifyConfig(verify_post_placer=False,
                                                               verify_post_autograd_passes=False)).get()
    assert_matches_golden(out[0].to_pytorch(), model(x))
