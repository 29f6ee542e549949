"""GuardTakeIndices: take's unchecked "fast" mode becomes "clip"."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.guard_take import GuardTakeIndices


@I.ir_module
class Before:
    @R.function
    def main(w: R.Tensor((10, 4), "float32"), ids: R.Tensor((3,), "int32")):
        with R.dataflow():
            y = R.take(w, ids, axis=0, mode="fast")
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(w: R.Tensor((10, 4), "float32"), ids: R.Tensor((3,), "int32")):
        with R.dataflow():
            y = R.take(w, ids, axis=0, mode="clip")
            R.output(y)
        return y


def test_fast_take_is_clipped():
    tvm.ir.assert_structural_equal(GuardTakeIndices()(Before), Expected)


def test_no_fast_take_warning_for_embeddings(capfd):
    """Token and constant position ids (folded at compile time) both go through a guarded take, so TVM
    never prints its "Fast mode segfaults" warning for a model with an embedding."""
    import torch

    import tvm_buda

    class Embed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = torch.nn.Embedding(50, 32), torch.nn.Embedding(16, 32)
            self.proj = torch.nn.Linear(32, 32)

        def forward(self, ids):
            return self.proj(self.tokens(ids) + self.positions(torch.arange(ids.shape[1])))

    torch.manual_seed(0)
    model, ids = Embed().eval(), torch.randint(0, 50, (2, 16))
    out = tvm_buda.compile_model(model, (ids,)).run(ids)
    with torch.no_grad():
        assert (out - model(ids)).abs().max() <= 0.1 * model(ids).abs().max()
    assert "Fast mode segfaults" not in capfd.readouterr().err
