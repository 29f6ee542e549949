"""TopOneAsMax: the values of topk(x, k=1) (PyTorch's x.max(dim, keepdim=True)) are a max."""

import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.top_one_as_max import TopOneAsMax


@I.ir_module
class Before:
    """As torch.export's importer writes x - x.max(-1, keepdim=True)[0]."""

    @R.function
    def main(x: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            top = R.topk(x, k=1, axis=-1, ret_type="both", largest=True, dtype="int64")
            values = top[0]
            indices = top[1]
            repacked = (values, indices)
            first = repacked[0]
            y = R.subtract(x, first)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            m = R.max(x, axis=[-1], keepdims=True)
            y = R.subtract(x, m)
            R.output(y)
        return y


def test_topk_values_become_max():
    after = relax.transform.DeadCodeElimination()(TopOneAsMax()(Before))
    tvm.ir.assert_structural_equal(after, Expected)
