"""Fewer young-generation garbage collections while a training loop runs.

A training step holds a few hundred to a few thousand container objects at once (each generated
module keeps every op's output tensor in a local until the program returns), so with CPython's
default threshold (700 net allocations) about one young collection runs per step. Each scans
the young objects and touches what they refer to in a heap of ~500k long-lived objects (the
compiled models): ~0.15 ms, about 1% of a small model's step, to free nothing - the step's
objects are freed by reference counting as the programs return. While run_training loops, the
young threshold is raised so collections run only when objects really accumulate; it is put
back afterwards (unless someone changed it meanwhile), after running the young collection the
default threshold would have run by then, so none is left for the caller. Garbage in reference
cycles is still collected, after at most YOUNG_THRESHOLD net allocations instead of 700.
"""

from __future__ import annotations

import contextlib
import gc

YOUNG_THRESHOLD = 20_000


@contextlib.contextmanager
def fewer_young_collections(threshold: int = YOUNG_THRESHOLD):
    """Within the block, generation 0 collects after `threshold` net allocations (if it would
    collect sooner); collection stays disabled if it was."""
    young, *older = gc.get_threshold()
    if young == 0 or young >= threshold:
        yield
        return
    gc.set_threshold(threshold, *older)
    try:
        yield
    finally:
        if gc.get_threshold()[0] == threshold:
            if gc.get_count()[0] > young:   # a collection the default would have run by now runs here,
                gc.collect(0)               # not at the caller's next allocation
            gc.set_threshold(young, *older)
