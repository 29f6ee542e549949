"""A TTDevice over several chips: which chips it owns, and how a run uses them.

Two ways to use the chips of a board (PyBuda's, on the simulator):
- pipeline (model) parallel: the placer splits the model's ops over the chips (epochs fill chip
  after chip; `set_chip_break` starts the next chip); every op runs on its chip and tensors that
  cross chips are recorded as Ethernet transfers. The numerics do not depend on the chip, so the
  outputs are bit-identical to one chip's.
- data parallel (PYBUDA_N300_DATA_PARALLEL=1): each chip runs the whole model on its share of
  the batch (the batch is split along dim 0); the outputs come back per chip, output by output:
  [out0 chip0, out0 chip1, out1 chip0, ...], as Tenstorrent's demos read them
  (`torch.cat((output[0], output[1]))`).

Grayskull boards have one chip and no Ethernet: asking for more chips is an error (a host pipeline
of one TTDevice per board is the way to use several).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import context, env
from ..module import PyBudaModule
from ..perf.chips import check_chip_count
from ..perf.ops import tensor_bytes
from ..tensor import Tensor

_last_runs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # device -> ChipLedger of its last run
_plans: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()       # device -> {id(compiled): ChipPlan}
_warned_pybuda_modules = set()


def resolve_chip_ids(device_name: str, num_chips, chip_ids, board) -> list[int]:
    """The chips a TTDevice uses. num_chips=0: all of the board; None with no chip_ids: one chip,
    or all of them when PYBUDA_N300_DATA_PARALLEL=1."""
    if chip_ids is not None:
        if any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) for c in chip_ids):
            raise ValueError(f"TTDevice {device_name}: chip_ids={list(chip_ids)} must be integers (Galaxy (x, y) "
                             "coordinates are not simulated; number the chips 0, 1, ...)")
        ids = [int(c) for c in chip_ids]
        bad = [c for c in ids if not 0 <= c < board.chips]
        if bad or not ids or len(set(ids)) != len(ids):
            raise ValueError(f"TTDevice {device_name}: chip_ids={list(chip_ids)} must be distinct chips of {board.name}, "
                             f"which has chip(s) {list(range(board.chips))}; set device_config to a board with more "
                             "chips (wh_n300: 2) or pick ids from that list")
        if num_chips not in (None, 0, len(ids)):
            raise ValueError(f"TTDevice {device_name}: num_chips={num_chips} contradicts chip_ids={ids}; give one of them")
        check_chip_count(board, len(ids))
        return ids
    if num_chips is None:
        num_chips = board.chips if data_parallel_requested() else 1
    if isinstance(num_chips, bool) or not isinstance(num_chips, (int, np.integer)) or num_chips < 0:
        raise ValueError(f"TTDevice {device_name}: num_chips={num_chips!r} must be a count of chips (0 = all)")
    count = board.chips if num_chips == 0 else int(num_chips)
    try:
        check_chip_count(board, count)
    except ValueError as exc:
        raise ValueError(f"TTDevice {device_name}: {exc}") from None
    return list(range(count))


def data_parallel_requested() -> bool:
    return env.N300_DATA_PARALLEL.get_int() == 1


def data_parallel(device) -> bool:
    """Whether this device splits each batch over its chips."""
    if not data_parallel_requested():
        return False
    if len(device.chip_ids) < 2:
        raise RuntimeError(f"{device.name}: PYBUDA_N300_DATA_PARALLEL=1 needs a device with two chips, this one has "
                           f"{len(device.chip_ids)} on {device.board_name}; set device_config='wh_n300' (and num_chips "
                           "to 2 or 0) or unset PYBUDA_N300_DATA_PARALLEL")
    return True


# ---- running -------------------------------------------------------------------------------------
def run_module(device, module, inputs, run_on_chip):
    """Run one placed module on the device's chips; `run_on_chip(module, inputs)` runs it once."""
    if data_parallel(device):
        return _run_data_parallel(device, module, inputs, run_on_chip)
    if len(device.chip_ids) == 1:
        return run_on_chip(module, inputs)
    if isinstance(module, PyBudaModule):
        _warn_unplaced(device, module)
        ledger = ChipLedger(device.chip_ids, _FixedChip(0))
    else:
        ledger = ChipLedger(device.chip_ids, lambda: plan_for(device, module))
    with context.on_chips(ledger):
        outputs = run_on_chip(module, inputs)
    _last_runs[device] = ledger
    return outputs


def last_run(device) -> "ChipLedger | None":
    """What the device's last run did on each chip (ops per chip, tensors that crossed chips)."""
    return _last_runs.get(device)


def _run_data_parallel(device, module, inputs, run_on_chip):
    chips = len(device.chip_ids)
    shares = split_batch(device.name, inputs, chips)
    ledger = ChipLedger(device.chip_ids, None)
    per_chip = []
    for index, share in enumerate(shares):
        ledger.plan = _FixedChip(index)
        with context.on_chips(ledger):
            per_chip.append(tuple(run_on_chip(module, share)))
    _last_runs[device] = ledger
    return tuple(outputs[i] for i in range(len(per_chip[0])) for outputs in per_chip)


def split_batch(device_name: str, inputs, chips: int) -> list:
    """One share of the inputs per chip: every input split into equal parts along dim 0."""
    named = isinstance(inputs, Mapping)
    items = list(inputs.items()) if named else list(enumerate(inputs))
    values = {}
    for key, value in items:
        host = value.value() if isinstance(value, Tensor) else value
        shape = tuple(getattr(host, "shape", ()))
        if not shape or shape[0] % chips:
            raise ValueError(f"{device_name}: data parallel over {chips} chips splits every input along dim 0, but "
                             f"input {key!r} has shape {shape}; use a batch divisible by {chips} (pad it) or unset "
                             "PYBUDA_N300_DATA_PARALLEL")
        step = shape[0] // chips
        values[key] = [host[i * step:(i + 1) * step] for i in range(chips)]
    if named:
        return [{k: parts[i] for k, parts in values.items()} for i in range(chips)]
    return [tuple(values[k][i] for k, _ in items) for i in range(chips)]


def full_batch_signature(device, signature):
    """With data parallel the module is compiled for one chip's share; pushed inputs carry all chips'."""
    if signature is None or not data_parallel_requested() or len(device.chip_ids) < 2:
        return signature
    names, specs = signature
    chips = len(device.chip_ids)
    return names, [((shape[0] * chips,) + tuple(shape[1:]) if shape else shape, dtype) for shape, dtype in specs]


def _warn_unplaced(device, module) -> None:
    if (device.name, module.name) not in _warned_pybuda_modules:
        _warned_pybuda_modules.add((device.name, module.name))
        warnings.warn(f"{device.name}: PyBudaModule {module.name} runs on the device's first chip; only framework "
                      "modules (PyTorchModule, ...) are split over chips by the placer", RuntimeWarning, stacklevel=4)


# ---- where each op runs ----------------------------------------------------------------------------
@dataclass
class ChipPlan:
    """op name (as the perf model names it) -> index of its chip within the device."""

    chips: dict
    qualified: bool                    # names are "<module>.<op>" (a model of several device programs)

    def chip_of(self, name: str):
        return self.chips.get(name)


class _FixedChip:
    qualified = False

    def __init__(self, chip: int):
        self.chip = chip

    def chip_of(self, name: str):
        return self.chip


def plan_for(device, module) -> ChipPlan | None:
    """The placer's split of `module` (a compiled framework module) over the device's chips."""
    compiled = device.compiled.get(id(module))
    if compiled is None:
        return None
    plans = _plans.setdefault(device, {})
    if id(compiled) not in plans:
        report = device_perf_report(device, compiled)
        steps = getattr(getattr(compiled, "summary", None), "steps", None)
        programs = len([s for s in steps if s.kind == "device"]) if steps is not None else compiled.num_device_subgraphs
        plans[id(compiled)] = ChipPlan({row.name: row.chip for row in report.ops if row.chip is not None}, programs > 1)
    return plans[id(compiled)]


def device_perf_report(device, compiled, microbatch=None):
    """The perf model's view of `compiled` on the chips this device owns."""
    return compiled.perf_report(device.board_name, microbatch, num_chips=len(device.chip_ids))


@dataclass
class Crossing:
    """A tensor an op read from another chip (over Ethernet)."""

    op: str
    src_chip: int
    dst_chip: int
    bytes: int


@dataclass
class ChipLedger:
    """The runtime's record of one run: the chip each executed op ran on, and the crossings."""

    chip_ids: list
    plan: object                                   # ChipPlan, _FixedChip, or a callable building the plan
    ops: list = field(default_factory=list)        # (op name, chip id) in execution order
    crossings: list = field(default_factory=list)
    _where: dict = field(default_factory=dict, repr=False)
    _floating: dict = field(default_factory=dict, repr=False)
    _prefix: str | None = field(default=None, repr=False)
    _calls: dict = field(default_factory=dict, repr=False)

    def enter_module(self, module_name: str) -> None:
        """A device program starts (the perf model prefixes a repeated program's ops with [k])."""
        count = self._calls.get(module_name, 0)
        self._calls[module_name] = count + 1
        self._prefix = module_name if count == 0 else f"{module_name}[{count}]"

    def record(self, name: str, inputs, result) -> None:
        plan = self.plan() if callable(self.plan) else self.plan
        if plan is None:          # compiling: ops run before the plan exists are not part of the run
            return
        self.plan = plan
        full = f"{self._prefix}.{name}" if plan.qualified and self._prefix else name
        sources = [self._source(t) for t in inputs]
        index = plan.chip_of(full)
        if index is None:         # a tm on an edge or an op fused into its producer: stays with its input
            index = next((s for s in sources if s is not None), None)
        if index is None:         # an op on weights only: it belongs to the chip of the op reading it
            self._floating[id(result.padded)] = (weakref.ref(result.padded), len(self.ops))
            self.ops.append((full, None))
            return
        for tensor, source in zip(inputs, sources):
            if source is not None and source != index:
                self.crossings.append(Crossing(full, self.chip_ids[source], self.chip_ids[index],
                                               tensor_bytes(tensor.shape, tensor.data_format)))
            floating = self._floating.pop(id(getattr(tensor, "padded", None)), None)
            if floating is not None and floating[0]() is tensor.padded:
                self.ops[floating[1]] = (self.ops[floating[1]][0], self.chip_ids[index])
        self._where[id(result.padded)] = (weakref.ref(result.padded), index)
        self.ops.append((full, self.chip_ids[index]))

    def _source(self, tensor):
        entry = self._where.get(id(getattr(tensor, "padded", None)))
        return entry[1] if entry is not None and entry[0]() is tensor.padded else None

    def ops_by_chip(self) -> dict:
        out: dict = {}
        for name, chip in self.ops:
            out.setdefault(chip, []).append(name)
        return out


def perf_report(device, microbatch=None):
    """TTDevice.perf_report: the perf model for the device's compiled module on its chips; with
    data parallel a DataParallelReport (one chip's share, times the chips, less the split's cost)."""
    from ..perf.data_parallel import data_parallel_report

    compiled = [device.compiled[id(m)] for m in device.modules if id(m) in device.compiled]
    if not compiled:
        raise RuntimeError(f"{device.name}: perf_report needs a compiled framework module; run the device once "
                           "(run_inference or initialize_pipeline) first")
    model = compiled[-1] if len(compiled) == 1 else compiled[getattr(device, "_active_subgraph", 0) or 0]
    if data_parallel(device):
        chips = len(device.chip_ids)
        per_chip = model.perf_report(device.board_name, microbatch and microbatch // chips, num_chips=1)
        one_chip = model.perf_report(device.board_name, per_chip.microbatch * chips, num_chips=1)
        return data_parallel_report(per_chip, one_chip, chips)
    return device_perf_report(device, model, microbatch)
