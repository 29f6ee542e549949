"""The shapes-only op-graph builder the reference benchmarks use (benchmarks/torch_op_graph.py)."""

import sys
from pathlib import Path

import torch

from buda_runtime_sim.perf import PlacementConfig, estimate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from torch_op_graph import op_graph_from_torch  # noqa: E402


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 32, 3, 2, 1, bias=False)
        self.bn = torch.nn.BatchNorm2d(32)
        self.pool = torch.nn.MaxPool2d(3, 2, 1)
        self.dw = torch.nn.Conv2d(32, 32, 3, 1, 1, groups=32)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        y = torch.nn.functional.relu6(self.dw(y)) + y
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))


def test_cnn_ops_map_to_device_ops_with_shapes():
    with torch.device("meta"):
        model = TinyNet()
    graph = op_graph_from_torch(model, [(1, 3, 64, 64)], "tiny")
    types = {op.name: op.op_type for op in graph.ops}
    assert list(types.values()) == ["Conv2d", "Relu", "MaxPool2d", "Conv2d", "Relu6", "Add", "ReduceAvg",
                                    "Matmul", "Add"]                 # batch norm folded, flatten free
    conv = graph.ops[0]
    assert conv.input_shapes == ((1, 3, 64, 64), (32, 3, 3, 3)) and conv.output_shape == (1, 32, 32, 32)
    assert graph.ops[2].attrs["kernel_size"] == (3, 3)
    assert graph.ops[6].input_shapes == ((1, 256, 32),)               # global pool as a reduce over H*W rows
    assert graph.ops[7].input_shapes == ((1, 32), (32, 10))           # linear weight used transposed
    assert [t.direction for t in graph.transfers] == ["h2d", "d2h"]
    report = estimate(graph, PlacementConfig("gs_e150"), microbatch=32)
    assert report.samples_per_second > 0
    assert report.op(graph.ops[3].name).kind == "depthwise"


def test_attention_becomes_two_matmuls_and_a_softmax():
    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    graph = op_graph_from_torch(Attention(), [(1, 4, 64, 32)] * 3, "attention")
    assert [(op.op_type, op.output_shape) for op in graph.ops] == [
        ("Matmul", (1, 4, 64, 64)), ("nn.Softmax", (1, 4, 64, 64)), ("Matmul", (1, 4, 64, 32))]
    assert graph.ops[0].input_shapes[1] == (1, 4, 32, 64)
