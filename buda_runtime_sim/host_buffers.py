"""Large host buffers allocated so that first writes into them stay cheap."""

from __future__ import annotations

import numpy as np


def empty_bytes(size: int) -> np.ndarray:
    """An uninitialised uint8 buffer for a large member (or what is computed from one).

    From torch's allocator, not numpy's: numpy advises the kernel to back large arrays with
    transparent huge pages, and where the kernel then compacts memory on the first touch
    (transparent_hugepage/defrag=madvise, with memory fragmented by the page cache: this machine)
    filling 700 MB that way costs 3-5x filling it in 4 KiB pages (median 1.3 s against 0.3 s)."""
    import torch

    return torch.empty(size, dtype=torch.uint8).numpy()
