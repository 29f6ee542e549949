"""The perf model counts activations between convs as [H*W, C] matrices, whatever their layout."""

from buda_runtime_sim.perf.channels_last import channels_last_matrices
from buda_runtime_sim.perf.costs import geometry
from buda_runtime_sim.perf.ops import OpGraph, PerfOp, tensor_tiles


def _graph(channel_last: bool) -> OpGraph:
    act, bias = ((1, 7, 7, 2048), (1, 1, 1, 2048)) if channel_last else ((1, 2048, 7, 7), (1, 2048, 1, 1))
    conv_in = (1, 7, 7, 512) if channel_last else (1, 512, 7, 7)
    attrs = {"channel_last": channel_last}
    return OpGraph([
        PerfOp("conv", "Conv2d", (conv_in, (2048, 512, 1, 1)), act, ("x", "w"), "c", attrs),
        PerfOp("bias", "Add", (act, bias), act, ("c", "b"), "cb"),
        PerfOp("relu", "Relu", (act,), act, ("cb",), "r"),
        PerfOp("residual", "Add", (act, act), act, ("r", "skip"), "y"),
        PerfOp("pool", "ReduceAvg", (act,), (1, 1, 7, 2048) if channel_last else (1, 2048, 7, 1), ("y",), "p"),
    ], weights={"w", "b"})


def test_elementwise_ops_between_convs_run_on_pixel_by_channel_matrices():
    ops = {op.name: op for op in channels_last_matrices(_graph(True)).ops}
    for name in ("bias", "relu", "residual"):
        assert ops[name].output_shape == (1, 1, 49, 2048), name
        assert tensor_tiles(ops[name].output_shape) == 2 * 64   # 49 pixels -> 2 row tiles, not 7 x 1
        assert geometry(ops[name], {"w", "b"}).out_tiles == 128
    assert ops["bias"].input_shapes == ((1, 1, 49, 2048), (1, 1, 1, 2048))   # the bias stays one row
    assert ops["conv"].output_shape == (1, 7, 7, 2048)      # the conv's own geometry reads NHWC
    assert ops["pool"].input_shapes == ((1, 7, 7, 2048),)   # a reduction over H or W keeps its axes


def test_channels_first_activations_become_the_same_matrices():
    # PyBuda lowers an NCHW model's convs to the same pixel-by-channel matrices (its ResNet-50
    # netlist: add_69 is 98 pixel-row tiles by 8 channel tiles): a 7x7x2048 map is 2 x 64 tiles,
    # not 2048 channels of one padded tile each; the [1, C, 1, 1] bias becomes one row.
    ops = {op.name: op for op in channels_last_matrices(_graph(False)).ops}
    for name in ("bias", "relu", "residual"):
        assert ops[name].output_shape == (1, 1, 49, 2048), name
        assert geometry(ops[name], {"w", "b"}).out_tiles == 128
    assert ops["bias"].input_shapes == ((1, 1, 49, 2048), (1, 1, 1, 2048))
    assert ops["conv"].output_shape == (1, 2048, 7, 7)      # the conv's own geometry reads NCHW
    assert ops["pool"].input_shapes == ((1, 2048, 7, 7),)
