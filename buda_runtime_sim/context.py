"""The state one forward pass runs in: numerics to use, intermediates to keep, ops executed.

Ops are eager: each `pybuda.op.*` call computes immediately on the simulator and reports to
the current context, which the perf model and the intermediates queue read afterwards.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

from .numerics_config import NumericsConfig, OpNumerics


@dataclass
class OpRecord:
    """One executed op, for reports and the perf model."""

    op_type: str
    name: str
    input_shapes: list[tuple[int, ...]]
    output_shape: tuple[int, ...]
    numerics: OpNumerics
    attrs: dict


@dataclass
class ExecutionContext:
    numerics: NumericsConfig = field(default_factory=NumericsConfig)
    save_intermediates: frozenset[str] = frozenset()
    intermediates: dict = field(default_factory=dict)
    trace: list[OpRecord] = field(default_factory=list)
    record_trace: bool = False
    tracer: object = None  # when set, ops build a graph instead of computing: tracer(op_type, name, inputs, attrs)
    # when set (with record_trace), each executed op is shown to it:
    # observer(op_type, name, operands as given, device tensors or None, result, numerics, attrs)
    observer: object = None
    check_finite: str = "error"   # program outputs' inf/NaN check: "error", "warn" or "off" (finite_check.py)
    program: str = ""             # the device program running, kept up to date while an observer watches


_local = threading.local()
_default = ExecutionContext()
# This thread's `context` (unset: the default) and `chips`; op.dispatch reads `context` directly.
thread_state = _local


def current() -> ExecutionContext:
    return getattr(_local, "context", None) or _default


@contextlib.contextmanager
def _set_in_thread(attr: str, value):
    """This thread's `attr` is `value` inside the block (nests; the previous value is restored)."""
    previous = getattr(_local, attr, None)
    setattr(_local, attr, value)
    try:
        yield value
    finally:
        setattr(_local, attr, previous)


def use(context: ExecutionContext):
    """Run ops under `context` (nests; restores the previous one on exit)."""
    return _set_in_thread("context", context)


@contextlib.contextmanager
def watching(observer, numerics: NumericsConfig | None = None):
    """Run a program again inside the block with every op shown to `observer` (a diagnostic run:
    numerics as the current context's unless given; no chip ledger records it twice)."""
    ctx = ExecutionContext(numerics=numerics or current().numerics, record_trace=True, observer=observer,
                           check_finite="off")
    with use(ctx), _set_in_thread("chips", None):
        yield ctx


# How many on_chips blocks are open, in any thread: while none is, chip_ledger answers without
# reading thread-local state (op.dispatch reads it once per op, before asking chip_ledger).
open_ledgers = 0
_ledger_count_lock = threading.Lock()


def chip_ledger():
    """The multi-chip record ops report to (runtime/chips.py), or None on one chip."""
    return getattr(_local, "chips", None) if open_ledgers else None


@contextlib.contextmanager
def on_chips(ledger):
    """Ops run inside the block report the chip they run on to `ledger`."""
    global open_ledgers
    with _ledger_count_lock:
        open_ledgers += 1
    try:
        with _set_in_thread("chips", ledger):
            yield ledger
    finally:
        with _ledger_count_lock:
            open_ledgers -= 1
