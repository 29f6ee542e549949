"""perf_report(compiled_model): the simulator's perf model applied to a compiled model.

Reads the generated code's static shapes (codegen ModuleGraph) and the partition summary, never
runs numerics: each device subgraph becomes a device program, each of its calls moves its
inputs and outputs over PCIe. The model itself lives in buda_runtime_sim.perf.

The device streams a microbatch through each epoch one sample at a time: PyBuda's netlists hold
per-sample tensor shapes and loop over `input_count` inputs (perf_data/netlist_summary.md: BERT-Large's
matmuls are 384 rows, one sequence, at microbatch 64-128). So a model compiled for a batch of B is
priced as B runs of one sample: every value computed from the inputs has its leading dimension (the
batch, or batch x rows where a reshape merged them) divided by B; weights and values computed from
weights alone keep their shapes. The estimate is then the same whatever batch the model was compiled
for, and compiling at batch 1 is enough to price any microbatch.
"""

from __future__ import annotations

from buda_runtime_sim.perf import HostTransfer, OpGraph, PerfOp, PerfReport, PlacementConfig, estimate

__all__ = ["PerfReport", "PlacementConfig", "op_graph", "perf_report"]

WEIGHT_PREFIX = "self."   # generated code reads parameters as self.<name>, constants as self.get_constant(...)


def perf_report(compiled_model, device_config: str | None = None, microbatch: int | None = None, *,
                harvested_rows=None, op_sizes=None, epoch_breaks=None, chip_breaks=None,
                place_on_one_row: bool | None = None, num_chips: int | None = None,
                placement: PlacementConfig | None = None) -> PerfReport:
    """Estimate how fast `compiled_model` runs on a board.

    Settings come from the model's CompilerConfig (PlacementConfig.from_compiler_config), then
    `placement` if given replaces them, then each keyword given here overrides its field.
    microbatch: samples per microbatch (default: the compiled batch, the first input's leading dim).
    num_chips: chips of the board the model is split over (default: all of them).
    """
    config = placement or PlacementConfig.from_compiler_config(compiled_model.config)
    config = config.with_options(device_config=device_config, harvested_rows=harvested_rows, op_sizes=op_sizes,
                                 epoch_breaks=epoch_breaks, chip_breaks=chip_breaks,
                                 place_on_one_row=place_on_one_row, num_chips=num_chips)
    return estimate(op_graph(compiled_model, per_sample=True), config, microbatch or _samples_per_run(compiled_model))


def op_graph(compiled_model, per_sample: bool = False) -> OpGraph:
    """The compiled model's device ops, weights and host transfers as a perf-model OpGraph: at the
    compiled shapes (one run = the compiled batch), or `per_sample` (one run = one sample, as the
    device streams a microbatch; see the module doc)."""
    modules = {graph.module_name: graph for _, graph in compiled_model.subgraphs}
    summary = getattr(compiled_model, "summary", None)
    order = [s.op for s in summary.steps if s.kind == "device"] if summary is not None else list(modules)
    numerics = compiled_model.config.numerics()
    io_format = numerics.input_df
    batch = _samples_per_run(compiled_model) if per_sample else 1
    ops, weights, transfers = [], set(), []
    calls: dict[str, int] = {}
    for index, module in enumerate(order):
        graph = modules[module]
        calls[module] = calls.get(module, 0) + 1
        prefix = module if calls[module] == 1 else f"{module}[{calls[module] - 1}]"   # a module called again

        def ref(name: str, _index=index) -> str:
            return f"{_index}:{name}"

        sample = _per_sample(graph, batch)
        shapes = _value_shapes(graph)
        for line in graph.ops:
            refs = tuple(ref(n) for n in line.inputs)
            weights.update(ref(n) for n in line.inputs if n.startswith(WEIGHT_PREFIX))
            resolved = numerics.resolve(line.op, line.name)
            ops.append(PerfOp(
                f"{prefix}.{line.name}" if len(order) > 1 else line.name, line.op,
                tuple(sample(n, s) for n, s in zip(line.inputs, line.input_shapes)),
                sample(line.output, line.output_shape), refs, ref(line.output),
                dict(line.attrs), resolved.output_df, resolved.math_fidelity, resolved.weight_df, index))
        transfers += [HostTransfer(f"{prefix}:{n}", "h2d", sample(n, shapes[n]), io_format)
                      for n in graph.inputs if n in shapes]
        transfers += [HostTransfer(f"{prefix}:{n}", "d2h", sample(n, shapes[n]), io_format)
                      for n in graph.outputs if n in shapes]
    return OpGraph(ops, weights, transfers, _samples_per_run(compiled_model) // batch, compiled_model.name,
                   getattr(compiled_model, "graph_breaks", 0))


def _per_sample(graph, batch: int):
    """shape(value name, compiled shape) -> the value's shape for one sample of a batch-`batch` run:
    values computed from the program's inputs (not weights or constants alone) lose the batch from
    their leading dimension."""
    produced = {line.output for line in graph.ops}
    from_inputs = {n for line in graph.ops for n in line.inputs
                   if n not in produced and not n.startswith(WEIGHT_PREFIX)}
    for line in graph.ops:                       # ops are in program order: producers come first
        if any(n in from_inputs for n in line.inputs):
            from_inputs.add(line.output)

    def shape(name: str, compiled) -> tuple:
        compiled = tuple(int(d) for d in compiled)
        if batch == 1 or name not in from_inputs or not compiled or compiled[0] % batch:
            return compiled
        return (compiled[0] // batch,) + compiled[1:]

    return shape


def _value_shapes(graph) -> dict[str, tuple]:
    """Static shape of every value a ModuleGraph reads or writes."""
    shapes = {}
    for line in graph.ops:
        for name, shape in zip(line.inputs, line.input_shapes):
            shapes.setdefault(name, tuple(shape))
        shapes[line.output] = tuple(line.output_shape)
    return shapes


def _samples_per_run(compiled_model) -> int:
    """The compiled batch: the first input's leading dimension (1 for 0-d/1-d inputs)."""
    inputs = compiled_model.imported.inputs
    shape = inputs[0].shape if inputs else ()
    return int(shape[0]) if len(shape) >= 2 and shape[0] > 0 else 1
