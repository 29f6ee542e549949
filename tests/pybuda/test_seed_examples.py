"""The seed documents' examples, run unchanged except where they download weights."""

import torch

import pybuda
from tests.helpers import assert_matches_golden
from tests.models import golden


def test_quick_start_bert_encoder_on_wormhole(monkeypatch):
    from transformers import BertConfig, BertModel

    from buda_runtime_sim.runtime import devices

    monkeypatch.setattr(devices, "_silicon_warned", False)   # warned once per process: maybe by an earlier test

    torch.manual_seed(0)
    model = BertModel(BertConfig()).eval()  # instead of from_pretrained("bert-base-uncased")
    module = pybuda.PyTorchModule("bert_encoder", model.encoder)
    with __import__("pytest").warns(RuntimeWarning, match="no Tenstorrent hardware"):
        tt0 = pybuda.TTDevice(
            "tt0",
            module=module,
            arch=pybuda.BackendDevice.Wormhole_B0,
            devtype=pybuda.BackendType.Silicon,
        )
    assert tt0.arch == pybuda.BackendDevice.Wormhole_B0
    seq_len = 128
    input = torch.randn(1, seq_len, model.config.hidden_size)
    output_queue = pybuda.run_inference(inputs=[input])
    output = output_queue.get()
    print(output)
    assert_matches_golden(output[0].to_framework("pytorch"), golden(model.encoder, input), "bert-base encoder")


def test_cpu_fallback_example():
    class WithEmbedding(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(1000, 64)
            self.linear = torch.nn.Linear(64, 64)

        def forward(self, tokens):
            return torch.relu(self.linear(self.embed(tokens)))

    torch.manual_seed(0)
    module_with_unsupported_ops = WithEmbedding().eval()
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.enable_tvm_cpu_fallback = True
    tt0 = pybuda.TTDevice("tt0")
    tt0.place_module(pybuda.PyTorchModule("workload", module_with_unsupported_ops))
    for i in range(5):
        input_tokens = torch.randint(0, 1000, (1, 32))
        tt0.push_to_inputs((input_tokens))
        output_q = pybuda.run_inference()
        output = output_q.get()
        assert_matches_golden(output[0].value(), golden(module_with_unsupported_ops, input_tokens))
    compiled = tt0.compiled[id(tt0.modules[0])]
    assert "take" in compiled.cpu_ops() and "matmul" in compiled.device_ops()


class PyBudaTestModule(pybuda.PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        self.weights1 = pybuda.Parameter(torch.rand(32, 32), requires_grad=True)
        self.weights2 = pybuda.Parameter(torch.rand(32, 32), requires_grad=True)

    def forward(self, x):
        matmul1 = pybuda.op.Matmul("matmul1", x, self.weights1)
        matmul1_gelu = pybuda.op.Gelu("gelu", matmul1)
        matmul2 = pybuda.op.Matmul("matmul2", matmul1_gelu, self.weights2)
        return matmul2


def test_intermediates_example():
    tagged_operations = ["matmul1", "gelu"]
    pybuda.set_configuration_options(op_intermediates_to_save=tagged_operations)
    module = PyBudaTestModule("test_module")
    x = torch.randn(1, 32, 32)
    output_q = pybuda.run_inference(module, inputs=[x])
    intermediates_queue = pybuda.get_intermediates_queue()
    matmul1_tensor, gelu_tensor = intermediates_queue.get()
    print(matmul1_tensor)
    print(gelu_tensor)
    w1 = torch.from_numpy(module.weights1.value())
    w2 = torch.from_numpy(module.weights2.value())
    assert_matches_golden(matmul1_tensor.value(), x @ w1)
    assert_matches_golden(gelu_tensor.value(), torch.nn.functional.gelu(x @ w1))
    assert_matches_golden(output_q.get()[0].value(), torch.nn.functional.gelu(x @ w1) @ w2)


def test_results_example_output_queue_and_to_framework():
    module = PyBudaTestModule("run_direct")
    input1 = torch.randn(1, 32, 32)
    output_q = pybuda.run_inference(module, inputs=[(input1,)])
    output = output_q.get()
    as_tf = output[0].to_framework("tensorflow")
    as_jax = output[0].to_framework("jax")
    assert tuple(as_tf.shape) == (1, 32, 32) and tuple(as_jax.shape) == (1, 32, 32)
    assert output[0].shape == (1, 32, 32)
    assert output[0].data_format == pybuda.DataFormat.Float16_b
