"""A per-op answer when a compiled model's results do not match (`CompiledModel.explain`; `tvm_buda.explain`
in explain_model.py adds the compile stages).

A compiled model is run twice with every device op watched (context.watching's observer): once in float32 (Float32
formats, HiFi4), the reference, and once as configured. Each device op's output is compared with
its float32 twin, PyBuda's VerifyConfig intermediate checking (golden = the same graph evaluated
exactly, rule = buda_runtime_sim.verify); the first op that fails the rule is where the device's
numerics depart. The model's outputs are compared with the framework's, and so are the float32
run's: if those depart too, the cause is not numerics but the import or the lowering.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from buda_runtime_sim import context
from buda_runtime_sim.finite_check import FLOAT32_NUMERICS, NonFiniteResultError
from buda_runtime_sim.kernels import OpArgumentError
from buda_runtime_sim.runtime.verification import flat_outputs
from buda_runtime_sim.verify import compare

from .explain_report import Explanation, OpReport, OutputReport

_OP_IN_MESSAGE = re.compile(r"\b(relax\.[a-z_][\w.]*|aten[.:]{1,2}\w+)")
# how the simulator names an op in its errors: "Relu 'relu_4': ..." (kernels), "op 'multiply_2' (Multiply" (finite_check)
_DEVICE_OP_IN_MESSAGE = re.compile(r"\b([A-Z]\w*) '([\w.]+)': |\bop '([\w.]+)' \(([A-Z]\w*)")


def explain_compiled(compiled, inputs: tuple | None, golden=None) -> Explanation:
    """The ops of a compiled model; with `inputs`, each device op compared with float32 (and the
    outputs with `golden`, the framework's, when given)."""
    report = Explanation(compiled.name, compiled.framework, stage="build", ops=static_ops(compiled))
    if inputs is None:
        report.verdict = "compiled; run with inputs to compare each op"
        return report
    report.stage = "run"
    reference = _Capture()
    try:
        reference_outputs = _watched_run(compiled, inputs, reference, FLOAT32_NUMERICS)
    except Exception:   # noqa: BLE001 - the configured run below reports the failure
        reference_outputs = None
    device = _Capture(reference.values)
    try:
        outputs = _watched_run(compiled, inputs, device, compiled.exec_context.numerics)
    except Exception as exc:  # noqa: BLE001
        outputs = None
        report.error, report.error_type, report.failing_ops = message_of(exc), type(exc).__name__, named_ops(exc)
    _fill(report.ops, device.records)
    report.first_departure = next((op for op in report.ops if op.passed is False), None)
    if outputs is not None and golden is not None:
        report.outputs = _compare_outputs(outputs, reference_outputs, golden)
    report.verdict = _verdict(report)
    return report


def static_ops(compiled) -> list[OpReport]:
    """Every op in execution order: a device program's ops (from its generated module, formats as
    the configuration resolves them) where the program runs, host ops with their shapes."""
    graphs = {graph.module_name: graph for _, graph in compiled.subgraphs}
    numerics = compiled.exec_context.numerics
    ops = []
    for step in compiled.summary.steps:
        if step.kind == "host":
            out = step.output_shapes[0] if len(step.output_shapes) == 1 else step.output_shapes
            ops.append(OpReport("host", "", step.op, step.op, input_shapes=list(step.input_shapes), output_shape=out))
            continue
        graph = graphs.get(step.op)
        for line in (graph.ops if graph is not None else []):
            op_type = line.op.split(".")[-1]
            n = numerics.resolve(op_type, line.name)
            ops.append(OpReport("device", graph.module_name, line.name, op_type, line.source_op,
                                [list(s) for s in line.input_shapes], list(line.output_shape),
                                n.output_df.name, n.accumulate_df.name, n.math_fidelity.name))
    return ops


def named_ops(exc: BaseException) -> list[str]:
    """The ops an error names: an importer's unsupported ops, a kernel's op, the op behind an inf/NaN,
    Relax or ATen op names in its message."""
    if isinstance(exc, NonFiniteResultError) and exc.culprit is not None:
        return [f"{exc.culprit.program}/{exc.culprit.name} ({exc.culprit.op_type})"]
    if isinstance(exc, OpArgumentError) and exc.op:
        return [exc.op]
    found = list(getattr(exc, "ops", None) or [])
    message = message_of(exc)
    device_op = _DEVICE_OP_IN_MESSAGE.search(message)    # (an error that crossed TVM's FFI keeps only its message)
    if device_op is not None:
        op_type, name = device_op.group(1) or device_op.group(4), device_op.group(2) or device_op.group(3)
        found.append(f"{op_type} '{name}'")
    for match in _OP_IN_MESSAGE.findall(message):
        if match not in found:
            found.append(match)
    return found


class _Capture:
    """An observer keeping each device op's result: its values (the reference run) or its comparison
    with the reference (`reference`: values by (program, op name, occurrence))."""

    def __init__(self, reference: dict | None = None):
        self.reference = reference
        self.values: dict = {}
        self.records: dict = {}
        self._seen: Counter = Counter()

    def __call__(self, op_type, name, operands, tensors, result, numerics, attrs) -> None:
        program = context.current().program
        occurrence = self._seen[program, name]
        self._seen[program, name] += 1
        key = (program, name, occurrence)
        values = np.array(result.logical(), dtype=np.float64)
        if self.reference is None:
            self.values[key] = values
            return
        record = {"op_type": op_type, "numerics": numerics, "input_shapes": [list(t.shape) for t in tensors or ()],
                  "output_shape": list(result.shape), "nonfinite": int(values.size - np.isfinite(values).sum())}
        golden = self.reference.get(key)
        if golden is not None and golden.shape == values.shape:
            record["comparison"] = _op_comparison(values, golden)
        self.records[key] = record


def _op_comparison(values: np.ndarray, golden: np.ndarray):
    """PyBuda's rule; an inf/NaN the reference does not have always departs."""
    finite = np.isfinite(values)
    if not finite.all() and not np.array_equal(finite, np.isfinite(golden)):
        atol = 0.1 * float(np.max(np.abs(golden[np.isfinite(golden)]), initial=0.0))
        return False, float("nan"), float("inf"), atol
    result = compare(np.where(finite, values, 0.0), np.where(np.isfinite(golden), golden, 0.0))
    return result.passed, result.pcc, result.max_abs_error, result.atol


def _watched_run(compiled, inputs: tuple, observer, numerics) -> list:
    """One run of the whole model (host parts and device programs) with every device op shown to
    `observer`, at `numerics`; the model's own context is put back afterwards."""
    ctx = context.ExecutionContext(numerics=numerics, record_trace=True, observer=observer, check_finite="off")
    with compiled._run_lock:
        saved, compiled.exec_context = compiled.exec_context, ctx
        try:
            return [np.asarray(o, dtype=np.float64) for o in flat_outputs(compiled.run(*inputs))]
        finally:
            compiled.exec_context = saved


def _fill(ops: list[OpReport], records: dict) -> None:
    seen: Counter = Counter()
    for op in ops:
        if op.placement != "device":
            continue
        key = (op.program, op.name, seen[op.program, op.name])
        seen[op.program, op.name] += 1
        record = records.get(key)
        if record is None:
            continue
        n = record["numerics"]
        op.op_type, op.input_shapes, op.output_shape = record["op_type"], record["input_shapes"], record["output_shape"]
        op.output_df, op.accumulate_df, op.math_fidelity = n.output_df.name, n.accumulate_df.name, n.math_fidelity.name
        op.nonfinite = record["nonfinite"]
        if "comparison" in record:
            op.passed, op.pcc, op.max_error, op.atol = record["comparison"]


def _compare_outputs(outputs: list, reference: list | None, golden) -> list[OutputReport]:
    golden = [np.asarray(g, dtype=np.float64) for g in flat_outputs(golden)]
    reports = []
    for i, (out, gold) in enumerate(zip(outputs, golden)):
        result = _op_comparison(out, gold) if out.shape == gold.shape else (False, float("nan"), float("inf"), 0.0)
        report = OutputReport(i, list(gold.shape), result[1], result[2], result[3], result[0])
        if reference is not None and i < len(reference) and reference[i].shape == gold.shape:
            report.float32_passed, report.float32_pcc = _op_comparison(reference[i], gold)[:2]
        reports.append(report)
    return reports


def _verdict(report: Explanation) -> str:
    if report.error is not None:
        where = f" at {', '.join(report.failing_ops)}" if report.failing_ops else ""
        return f"the run failed{where}: {report.error_type}"
    first = report.first_departure
    if report.outputs and all(o.passed for o in report.outputs):
        return "the outputs match the framework" + (f" (op {first.where} departs from float32 on the way, "
                                                     "within tolerance at the outputs)" if first else "")
    if not report.outputs:
        return f"first departure from float32: {first.where}" if first else "every device op matches float32"
    if all(o.float32_passed is False for o in report.outputs if not o.passed):
        return ("the programs run in float32 depart from the framework too: the import or the lowering, not the "
                "device's numerics" + (f" (first departure from float32: {first.where})" if first else ""))
    if first is not None:
        return (f"the device's numerics: op {first.where} ({first.op_type}) is the first to depart from float32; "
                f"try configure_mixed_precision(name_regex={first.name!r}, output_df=DataFormat.Float32, "
                "math_fidelity=MathFidelity.HiFi4)")
    return "the outputs depart while no single device op does: errors accumulate over many ops"


def message_of(exc: BaseException, max_lines: int = 3) -> str:
    """The error's own words: its first lines without stack traces (TVM's carry them), and its notes."""
    lines = [line.strip() for line in str(exc).splitlines()
             if line.strip() and not line.startswith((" ", "\t")) and not line.startswith("Traceback")]
    notes = getattr(exc, "__notes__", None) or []
    return "; ".join([" ".join(lines[:max_lines]) or type(exc).__name__, *notes])
