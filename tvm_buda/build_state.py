"""The state of one compilation, visible to the "buda" Relax pipeline while it runs.

`tvm.compile(mod, target="buda", relax_pipeline="buda")` cannot pass arguments to a registered
pipeline, so `tvm_buda.build` installs a BuildState for the duration of the call; a plain
`tvm.compile` gets one made from the global CompilerConfig.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from buda_runtime_sim.config import CompilerConfig, _get_global_compiler_config

_local = threading.local()


@dataclass
class BuildState:
    config: CompilerConfig
    model_name: str = "module"
    params: dict[str, np.ndarray] = field(default_factory=dict)  # main parameter name -> value
    framework: str = "relax"
    links_vm: bool = False   # tvm_buda makes the VM itself, so subgraph symbols need no lasting registration
    recorder: object = None  # reports.PassRecorder when a Reportify report is wanted
    fold_weights: bool = True  # graph passes may bake weight values into constants (not when training)
    # Filled in by the pipeline:
    partitioned: object = None                       # IRModule after partitioning (for reports)
    subgraphs: list = field(default_factory=list)    # (DeviceSubgraph, ModuleGraph), in call order
    summary: object = None                           # PartitionSummary
    error: Exception | None = None                   # a user-facing error raised inside the pipeline
    index_limits: dict = field(default_factory=dict) # input name -> embedding rows it indexes
    baked_weights: set = field(default_factory=set)  # weight names folded into constants by graph passes

    @property
    def output_dir(self) -> Path:
        return Path(self.config.generated_modules_dir)


def current_build() -> BuildState:
    state = getattr(_local, "state", None)
    return state if state is not None else BuildState(_get_global_compiler_config())


@contextlib.contextmanager
def active_build(state: BuildState):
    previous = getattr(_local, "state", None)
    _local.state = state
    try:
        yield state
    finally:
        _local.state = previous


def stage(name: str) -> None:
    """Announce a compilation stage to the active progress reporter (the CLI's progress bar)."""
    reporter = getattr(_local, "reporter", None)
    if reporter is not None:
        reporter(name)


@contextlib.contextmanager
def progress_reporter(callback):
    """Call `callback(stage_name)` at each compilation stage inside the block (and the reporter of
    an enclosing block too)."""
    previous = getattr(_local, "reporter", None)

    def both(name):
        callback(name)
        previous(name)

    _local.reporter = callback if previous is None else both
    try:
        yield
    finally:
        _local.reporter = previous
