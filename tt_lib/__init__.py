"""tt_lib (TT-Dispatch) on the simulated device: `tt_lib.device` and `tt_lib.tensor`.

The seed documents' `from libs import tt_lib` also works: `libs` is a namespace package, so a
`libs` package of your own (anywhere on sys.path) still wins over ours.
"""

from . import device, tensor

__all__ = ["device", "tensor"]
