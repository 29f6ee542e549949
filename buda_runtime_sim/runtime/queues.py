"""Queues the runtime fills besides the output queue: intermediates saved during forward passes."""

from __future__ import annotations

import queue

_intermediates: queue.Queue | None = None


def intermediates_queue() -> queue.Queue:
    global _intermediates
    if _intermediates is None:
        _intermediates = queue.Queue()
    return _intermediates


def get_intermediates_queue() -> queue.Queue:
    """Lists of the tensors tagged with op_intermediates_to_save, one list per forward pass."""
    return intermediates_queue()


def reset_intermediates() -> None:
    global _intermediates
    _intermediates = None
