"""Op kernels, keyed by PyBuda op name. Importing this package registers all of them."""

from . import eltwise, matmul, nn, tm  # noqa: F401  (registration side effects)
from .registry import KERNELS, get_kernel

__all__ = ["KERNELS", "get_kernel"]
