"""A small CNN end to end: runs channels-last on the device, conv kernels held as matrices, and
matches PyTorch under PyBuda's rule."""

import os
import re

import pytest
import torch
from torch import nn

import tvm_buda
from buda_runtime_sim.tensor import round_up
from buda_runtime_sim.verify import compare


class SmallCnn(nn.Module):
    """Stem, residual block with batch norm, grouped and depthwise convs, an upsampling transposed
    conv, both pools and a linear head: every conv form the device lowers."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 5, 2, 2, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.grouped = nn.Conv2d(16, 16, 3, 1, 1, groups=4)
        self.bn = nn.BatchNorm2d(16)
        self.depthwise = nn.Conv2d(16, 16, 3, 1, 2, dilation=2, groups=16)
        self.up = nn.ConvTranspose2d(16, 8, 2, 2)
        self.pool = nn.AvgPool2d(2)
        self.head = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        h = self.stem(x)
        h = torch.relu(self.bn(self.grouped(h)) + h)
        h = self.pool(self.up(torch.relu(self.depthwise(h))))
        return self.head(torch.flatten(h, 1))


@pytest.fixture(scope="module")
def compiled_cnn(tmp_path_factory):
    """(model, input, compiled model, generated source), compiled once for the module's tests."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("small_cnn"))
    torch.manual_seed(0)
    model = SmallCnn().eval()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        for bn in (model.stem[1], model.bn):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 3, 32, 32)
    try:
        compiled = tvm_buda.compile_model(model, (x,), name="small_cnn")
        source = "\n".join(p.read_text() for p in compiled.generated_files if p.suffix == ".py")
        yield model, x, compiled, source
    finally:
        os.chdir(here)


def test_small_cnn_runs_channels_last_and_matches_pytorch(compiled_cnn):
    model, x, compiled, source = compiled_cnn
    with torch.no_grad():
        golden = model(x)
    result = compare(compiled.run(x), golden)
    assert result.passed, result
    assert compiled.cpu_ops() == []

    convs = re.findall(r"pybuda\.op\.Conv2d(?:Transpose)?\(.*", source)
    pools = re.findall(r"pybuda\.op\.(?:Max|Avg)Pool2d\(.*", source)
    assert len(convs) == 4 and len(pools) == 2
    assert all("channel_last=True" in line for line in convs + pools)
    # Activations are transposed once into the conv region and once out of it, never per op.
    assert len(re.findall(r"pybuda\.op\.Permute\(", source)) == 2


def test_conv_parameters_take_matrix_memory_on_the_device(compiled_cnn):
    from buda_runtime_sim.op.dispatch import _LAID_OUT

    model, x, compiled, _ = compiled_cnn
    compiled.run(x)
    (subgraph, _), = compiled.subgraphs
    params = {p.get_name(): p for p in subgraph.module.get_parameters()}
    # stem and grouped convs are followed by batch norm: their kernels were folded into constants
    assert {"p_stem_0_weight", "p_grouped_weight"} <= set(compiled.summary.baked_weights)
    for name, conv in [("depthwise_weight", model.depthwise), ("up_weight", model.up)]:
        kh, kw = conv.kernel_size
        rows = kh * kw * conv.in_channels // conv.groups
        expected = round_up(rows) * round_up(conv.out_channels) * 4  # one float32 matrix, tile-padded
        assert params[name].device_bytes() == expected, name
        assert params[name].shape == tuple(conv.weight.shape)  # the host keeps the framework layout
    folded = {tuple(t.shape) for _, tensors in _LAID_OUT.values() for t in tensors.values()}
    for conv in (model.stem[0], model.grouped):   # folded kernels are held as matrices too
        kh, kw = conv.kernel_size
        assert (kh * kw * conv.in_channels // conv.groups, conv.out_channels) in folded
