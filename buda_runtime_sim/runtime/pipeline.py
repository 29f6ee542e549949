"""Running the device pipeline: run_inference, initialize_pipeline, run_forward, shutdown."""

from __future__ import annotations

import queue
import warnings
from collections.abc import Mapping

from .. import module as _module
from . import device_pipeline, devices, pipeline_state, queues, registry
from . import training as _training


def _forward(pipeline, count: int, output_queue: queue.Queue, d2d_queues=()) -> None:
    first = pipeline[0]
    if len(first.input_queue) < count:
        raise RuntimeError(
            f"{count} input(s) requested but {len(first.input_queue)} queued on {first.name}; "
            "push inputs with device.push_to_inputs(...) or pass inputs=[...]"
        )
    for _ in range(count):
        values = device_pipeline.forward(pipeline, first.input_queue.popleft(), d2d_queues)
        output_queue.put(pipeline_state.wrap(values))


@pipeline_state.serialised
def run_inference(module=None, inputs=(), input_count: int = 1, output_queue: queue.Queue | None = None,
                  _sequential: bool = False, _perf_trace: bool = False, _verify_cfg=None, **legacy):
    """Run inputs through the device pipeline; returns the queue the outputs (lists of Tensors) go to.

    Accepts the older spelling `num_inputs=` / `sequential=` too.
    """
    unknown = set(legacy) - {"num_inputs", "sequential"}
    if unknown:
        raise TypeError(f"run_inference got unexpected argument(s): {', '.join(sorted(unknown))}")
    input_count = legacy.get("num_inputs", input_count)
    created = devices.TTDevice("tt0", module=module) if module is not None else None
    pushed = []
    try:
        pipeline = pipeline_state.stages()
        for item in inputs:
            pipeline[0].push_to_inputs(item)
            pushed.append(pipeline[0].input_queue[-1])
        output_queue = output_queue if output_queue is not None else queue.Queue()
        _forward(pipeline, len(inputs) if inputs else input_count, output_queue)
    except BaseException:
        _undo(created, pushed)
        raise
    return output_queue


def _undo(created, pushed: list) -> None:
    """After a failed run_inference: forget the device it created and the inputs it queued that
    were not run, so the next call starts from the state before this one."""
    for device in registry.registered_devices():
        device.input_queue = type(device.input_queue)(
            v for v in device.input_queue if not any(v is p for p in pushed))
    if created is not None:
        created.shutdown_device()
        created.remove_modules()
        registry.remove_device(created)


@pipeline_state.serialised
def initialize_pipeline(training: bool = False, output_queue: queue.Queue | None = None, checkpoint_queue=None,
                        sample_inputs=(), sample_targets=(), microbatch_count: int = 1, d2d_fwd_queues=(),
                        d2d_bwd_queues=(), _sequential: bool = False, _verify_cfg=None, _device_mode=None):
    """Compile every module for `sample_inputs` so later run_forward calls only execute. Returns the
    output queue, or with training=True the checkpoint queue (see runtime.training).

    d2d_fwd_queues (one per device boundary, or none) receive the tensors each run_forward sends
    from one device to the next; d2d_bwd_queues the gradients sent back when training
    (runtime/device_pipeline.py)."""
    if not isinstance(microbatch_count, int) or isinstance(microbatch_count, bool) or microbatch_count < 1:
        raise ValueError(f"initialize_pipeline: microbatch_count must be a positive integer, got {microbatch_count!r}")
    if training:
        return _training.initialize_training(output_queue, checkpoint_queue, sample_inputs, sample_targets,
                                            microbatch_count, d2d_fwd_queues, d2d_bwd_queues)
    _training.reset()
    pipeline = pipeline_state.stages()
    d2d_fwd = device_pipeline.check_d2d_queues("d2d_fwd_queues", d2d_fwd_queues, pipeline)
    device_pipeline.check_d2d_queues("d2d_bwd_queues", d2d_bwd_queues, pipeline)  # filled only when training
    if sample_inputs is None or (isinstance(sample_inputs, (tuple, list)) and not sample_inputs):
        if not pipeline[0].input_queue:
            raise ValueError("initialize_pipeline: sample_inputs are needed to compile (a tuple or dict of tensors "
                             f"with the shapes and dtypes the model will see), or push one input to {pipeline[0].name} "
                             "first")
        sample_inputs = pipeline[0].input_queue[0]  # the first queued input (user guide 001); it stays queued
    values = sample_inputs if isinstance(sample_inputs, (tuple, list, Mapping)) else (sample_inputs,)
    device_pipeline.forward(pipeline, values)  # run once: compiles framework modules and checks the whole pipeline
    queues.reset_intermediates()  # the compile pass is not a user forward
    pipeline_state.state["output_queue"] = output_queue if output_queue is not None else queue.Queue()
    pipeline_state.state["initialized"] = True
    pipeline_state.state["d2d_fwd_queues"] = d2d_fwd
    return pipeline_state.state["output_queue"]


@pipeline_state.serialised
def run_forward(input_count: int = 1, _sequential: bool = False) -> None:
    """Run queued inputs through an initialized pipeline; outputs go to initialize_pipeline's queue
    (when training: the loss, and the pass is kept for run_backward)."""
    if _training.is_training():
        return _training.run_forward(input_count)
    if not pipeline_state.state["initialized"]:
        raise RuntimeError("run_forward before initialize_pipeline; call pybuda.initialize_pipeline(training=False, "
                           "sample_inputs=...) first (or use run_inference)")
    pipeline, state = pipeline_state.stages(), pipeline_state.state
    d2d = device_pipeline.check_d2d_queues("d2d_fwd_queues", state["d2d_fwd_queues"], pipeline)  # devices may have changed
    _forward(pipeline, input_count, state["output_queue"], d2d)



@pipeline_state.serialised
def run_module(module, args):
    """`Module.run(*args)`: place on a fresh TTDevice, run once, return the outputs."""
    shutdown()
    devices.TTDevice("tt0", module=module)
    try:
        return tuple(run_inference(inputs=[tuple(args)]).get())
    finally:
        shutdown()


@pipeline_state.serialised
def shutdown() -> None:
    """Stop all devices and forget the pipeline; unconsumed inputs are dropped with a warning. Idempotent."""
    for device in registry.registered_devices():
        dropped = device.shutdown_device()
        if dropped:
            warnings.warn(f"shutdown: {dropped} input(s) pushed to {device.name} were never run and were discarded",
                          RuntimeWarning, stacklevel=2)
        device.remove_modules()
    registry.clear_devices()
    pipeline_state.reset()
    _training.reset()
    queues.reset_intermediates()


_module.set_runner(run_module)


def detect_available_devices() -> list:
    """The simulated chips, one BackendDevice each: those of the board `device_config` names
    (set_configuration_options(device_config=...)); without one, those of the installed board
    (PYBUDA_DEVICE_CONFIG: one Wormhole n150 unless set), whose arch a TTDevice gets by default, so
    `detect_available_devices()[0]` is the arch a script will run on. Never empty."""
    from .. import config
    from ..perf.boards import get_board

    board = get_board(config._get_global_compiler_config().device_config)   # None: the installed board
    return [board.arch] * board.chips
