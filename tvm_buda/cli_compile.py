"""Compiling a model file from the command line's model arguments (cli.py's _add_model_arguments), with
a progress bar naming each stage: shared by `tvm-buda compile | run | report` and `tvm-buda image save`."""

from __future__ import annotations

import sys
from pathlib import Path

COMPILE_STAGES = ["import model", "graph passes", "partition", "generate PyBuda modules", "build host code (LLVM)"]


def compile_file(args, stages: list[str]):
    """Compile MODEL with a progress bar naming each stage; returns (compiled, input names, inputs)."""
    from tqdm import tqdm

    from buda_runtime_sim.config import CompilerConfig
    from buda_runtime_sim.dataformat import DataFormat, MathFidelity

    from .build_state import progress_reporter
    from .model_compiler import compile_model
    from .model_files import framework_of_file, sample_inputs

    path = Path(args.model)
    if args.framework and path.exists() and framework_of_file(path) != args.framework:
        raise ValueError(f"{path} is a {framework_of_file(path)} model, not {args.framework}")
    names, inputs = sample_inputs(path, args.input_shape or [])
    config = CompilerConfig()
    if args.df:
        config.default_df_override = DataFormat.parse(args.df)
    if args.fidelity:
        config.default_math_fidelity = MathFidelity.parse(args.fidelity)
    if args.no_fallback:
        config.enable_tvm_cpu_fallback = False
    config.enable_reportify = bool(getattr(args, "html", False))
    with tqdm(total=len(stages), desc="compile", unit="stage", leave=False, file=sys.stderr,
              disable=args.quiet) as bar:
        def on_stage(name):
            bar.set_description(name)
            if name in stages:
                bar.update(1)

        with progress_reporter(on_stage):
            compiled = compile_model(str(path), tuple(inputs), config=config, name=args.name)
        bar.update(bar.total - bar.n)
    return compiled, names, inputs
