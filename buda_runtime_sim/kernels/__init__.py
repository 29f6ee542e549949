"""Op kernels, keyed by PyBuda op name. Importing this package registers all of them."""

from . import compare, conv, eltwise, matmul, nn, nn_grad, pool, reduce, sfpu, slicing, tm  # noqa: F401  (registration)
from .common import OpArgumentError
from .registry import KERNELS, get_kernel

__all__ = ["KERNELS", "OpArgumentError", "get_kernel"]
