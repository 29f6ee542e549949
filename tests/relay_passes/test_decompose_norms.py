"""DecomposeNorms: instance / group norm as reductions and elementwise ops, tile as concat."""

import numpy as np
import torch
from tvm import relax

import tvm_buda
from relay_passes.decompose_norms import DecomposeNorms
from tests.helpers import assert_matches_golden
from tests.relay_passes.ir import op_names, run_llvm


def _norm_module():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 6, 4, 5), "float32"))
    g = relax.Var("g", relax.TensorType((6,), "float32"))
    b = relax.Var("b", relax.TensorType((6,), "float32"))
    with bb.function("main", [x, g, b]):
        with bb.dataflow():
            i = bb.emit(relax.op.nn.instance_norm(x, g, b, channel_axis=1, axes=[2, 3], epsilon=1e-3))
            n = bb.emit(relax.op.nn.group_norm(x, g, b, num_groups=3, channel_axis=1, axes=[2, 3], epsilon=1e-5))
            u = bb.emit(relax.op.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3], center=False,
                                               scale=False))
            t = bb.emit(relax.op.tile(g, [2, 3]))
            out = bb.emit_output(relax.Tuple([i, n, u, t]))
        bb.emit_func_output(out)
    return bb.get()


def test_norms_and_tile_decompose_with_the_same_result():
    before = _norm_module()
    after = DecomposeNorms()(before)
    assert not {"relax.nn.instance_norm", "relax.nn.group_norm", "relax.tile"} & set(op_names(after)), op_names(after)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) * 3 + 1 for s in ((2, 6, 4, 5), (6,), (6,))]
    (i, n, u, t), (i_tvm, n_tvm, _, t_tvm) = run_llvm(after, *arrays), run_llvm(before, *arrays)
    for got, want in ((i, i_tvm), (n, n_tvm), (t, t_tvm)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # TVM's own lowering of group_norm applies gamma/beta even with center=scale=False: numpy decides
    grouped = arrays[0].reshape(2, 2, -1)
    plain = (grouped - grouped.mean(2, keepdims=True)) / np.sqrt(grouped.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(u, plain.reshape(2, 6, 4, 5), rtol=1e-4, atol=1e-4)


def test_instance_and_group_norm_run_on_the_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.InstanceNorm2d(4, affine=True), torch.nn.GroupNorm(2, 4)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(0.5, 1.5)
    x = torch.randn(2, 4, 6, 6) * 2 + 1
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == [], compiled.cpu_ops()
    assert_matches_golden(compiled.run(x), model(x))
