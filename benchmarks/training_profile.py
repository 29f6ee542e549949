"""Where a simulated training step goes: kernel work per op type, and everything around it.

    python benchmarks/training_profile.py [--steps N] [--hidden H] [--seq S] [--batch B]

Same model, batches and optimizer as training_speed.py. After two warm-up steps:

1. real steps: the median CPU time of `--steps` steps, and inside them each kernel call's own CPU
   time (per op type): the kernels as they run in a step, caches shared with everything else;
2. the same kernels alone: one step's kernel calls are recorded with their operands and each is
   re-timed alone (minimum of repeats, so hot caches);
3. around the kernels: every kernel is replaced by a lookup of a result it gave for the same op,
   operand shapes and attributes, and the median CPU time of `--steps` more steps is what
   surrounds the kernels: op dispatch, the Relax VM and its host ops, conversions at
   device-program boundaries, weight updates, the loss on the CPU device and the optimizer.

A real step is about its kernels in a step plus what surrounds them; the kernels cost more in a
step than alone (2.), which is the gap between 1. and 2. + 3.
"""

from __future__ import annotations

import importlib.util
import queue
import statistics
import time
import timeit
from collections import defaultdict
from pathlib import Path

_spec = importlib.util.spec_from_file_location("training_speed", Path(__file__).with_name("training_speed.py"))
training_speed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(training_speed)


def recorded_step(pybuda, kernels: dict, loss_q) -> list:
    """(op type, operands, attributes, numerics) of every kernel call in one training step."""
    calls = []
    original = dict(kernels)

    def recorder(op_type, fn):
        def record(inputs, attrs, numerics):
            calls.append((op_type, list(inputs), dict(attrs), numerics))
            return fn(inputs, attrs, numerics)
        return record

    kernels.update({op_type: recorder(op_type, fn) for op_type, fn in original.items()})
    try:
        pybuda.run_training(steps=1, loss_queue=loss_q)
    finally:
        kernels.update(original)
    return calls


def steps_with_kernel_times(pybuda, kernels: dict, loss_q, steps: int) -> tuple[float, dict]:
    """(median CPU seconds of a real step, op type -> (kernel CPU seconds per step, calls per step))."""
    original = dict(kernels)
    totals = defaultdict(lambda: [0.0, 0])

    def timer(op_type, fn):
        def timed(inputs, attrs, numerics):
            start = time.thread_time()
            out = fn(inputs, attrs, numerics)
            totals[op_type][0] += time.thread_time() - start
            totals[op_type][1] += 1
            return out
        return timed

    kernels.update({op_type: timer(op_type, fn) for op_type, fn in original.items()})
    try:
        times = step_times(pybuda, loss_q, steps)
    finally:
        kernels.update(original)
    return statistics.median(times), {k: (seconds / steps, count // steps) for k, (seconds, count) in totals.items()}


def step_times(pybuda, loss_q, steps: int) -> list[float]:
    """CPU seconds of each of `steps` training steps."""
    times = []
    for _ in range(steps):
        start = time.process_time()
        pybuda.run_training(steps=1, loss_queue=loss_q)
        times.append(time.process_time() - start)
    return times


def kernel_minima(kernels: dict, calls: list, repeat: int = 5, number: int = 10) -> dict:
    """op type -> (seconds summed over its calls, calls)."""
    totals = defaultdict(lambda: [0.0, 0])
    for op_type, inputs, attrs, numerics in calls:
        fn = kernels[op_type]
        best = min(timeit.repeat(lambda: fn(inputs, attrs, numerics), number=number, repeat=repeat)) / number
        totals[op_type][0] += best
        totals[op_type][1] += 1
    return {k: tuple(v) for k, v in totals.items()}


def steps_without_kernels(pybuda, kernels: dict, loss_q, steps: int) -> list[float]:
    """CPU seconds of each step with every kernel answered from a table of earlier results."""
    original = dict(kernels)
    table = {}

    def lookup(op_type, fn):
        def stub(inputs, attrs, numerics):
            key = (op_type, tuple(t.shape for t in inputs), repr(sorted(attrs.items())))
            if key not in table:
                table[key] = fn(inputs, attrs, numerics)
            return table[key]
        return stub

    kernels.update({op_type: lookup(op_type, fn) for op_type, fn in original.items()})
    try:
        pybuda.run_training(steps=1, loss_queue=loss_q)     # fills the table
        return step_times(pybuda, loss_q, steps)
    finally:
        kernels.update(original)


def main(argv=None) -> int:
    args = training_speed.parse_args(argv, __doc__.splitlines()[0])
    pybuda, _, _, _, _ = training_speed.start_training(args, total=2 + args.steps + 1 + 1 + args.steps)
    from buda_runtime_sim.kernels import KERNELS

    loss_q = queue.Queue()
    pybuda.run_training(steps=2, loss_queue=loss_q)   # warm-up: weights converted, caches filled
    step, in_step = steps_with_kernel_times(pybuda, KERNELS, loss_q, args.steps)
    calls = recorded_step(pybuda, KERNELS, loss_q)
    minima = kernel_minima(KERNELS, calls)
    around = statistics.median(steps_without_kernels(pybuda, KERNELS, loss_q, args.steps))
    pybuda.shutdown()
    kernel_total = sum(seconds for seconds, _ in minima.values())
    in_step_total = sum(seconds for seconds, _ in in_step.values())
    print(training_speed.describe(args))
    print(f"a real step (CPU time, median of {args.steps}): {1e3 * step:.2f} ms, of which kernels "
          f"{1e3 * in_step_total:.2f} ms (their own CPU time inside the steps)")
    print(f"kernel work, hot caches: {1e3 * kernel_total:.2f} ms over {len(calls)} kernel calls a step "
          f"(in a step / alone, per op type)")
    for op_type, (seconds, count) in sorted(minima.items(), key=lambda kv: -kv[1][0]):
        real = in_step.get(op_type, (0.0, 0))[0]
        print(f"  {op_type:14s} {1e3 * real:6.2f} / {1e3 * seconds:5.2f} ms  {count:4d} calls  "
              f"{1e6 * real / count:6.1f} / {1e6 * seconds / count:5.1f} us each")
    print(f"around the kernels (CPU time, median of {args.steps} steps with kernels looked up): {1e3 * around:.2f} ms")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)
    print(bf16_gemm.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
