"""CompilerConfig's balancer policy and DRAM-parameter options as the perf model reads them."""

import pybuda
from buda_runtime_sim.perf import PlacementConfig, estimate
from tests.buda_runtime_sim.test_perf_placement import mlp_graph


def _placed(report):
    return [row for row in report.ops if row.grid is not None]


def test_minimize_grid_policy_gives_every_op_one_core():
    default = estimate(mlp_graph(layers=2), PlacementConfig("wh_n150"))
    minimal = estimate(mlp_graph(layers=2), PlacementConfig("wh_n150", balancer_policy="MinimizeGrid"))
    assert any(row.grid != (1, 1) for row in _placed(default))
    assert all(row.grid == (1, 1) for row in _placed(minimal))
    assert minimal.samples_per_second < default.samples_per_second


def test_dram_parameters_stream_weights_every_run():
    graph = mlp_graph(layers=2, width=256, rows=64)
    in_l1 = estimate(graph, PlacementConfig("wh_n150"), microbatch=8)
    in_dram = estimate(graph, PlacementConfig("wh_n150", default_dram_parameters=True), microbatch=8)
    assert sum(e.prologue_cycles for e in in_l1.epochs) > 0
    assert sum(e.prologue_cycles for e in in_dram.epochs) == 0
    one_op = estimate(graph, PlacementConfig("wh_n150", dram_parameters={"mm0": True}), microbatch=8)
    assert 0 < sum(e.prologue_cycles for e in one_op.epochs) < sum(e.prologue_cycles for e in in_l1.epochs)


def test_compiler_config_reaches_the_placement_config():
    cfg = pybuda.config._get_global_compiler_config()
    cfg.balancer_policy = "MinimizeGrid"
    cfg.default_dram_parameters = True
    pybuda.config.override_dram_parameters("mm1", False)
    placement = PlacementConfig.from_compiler_config(cfg)
    assert placement.balancer_policy == "MinimizeGrid"
    assert placement.weights_in_dram("mm0") and not placement.weights_in_dram("mm1")


def test_balancer_finds_the_best_plan_of_any_target():
    """The balancer tries every op's frontier cycle counts as stage-time targets (the only places
    where a pick changes), so no target, however finely sampled, gives a cheaper plan."""
    import numpy as np

    from buda_runtime_sim.perf import balancer as B
    from buda_runtime_sim.perf.boards import get_board
    from buda_runtime_sim.perf.epochs import epoch_costs
    from buda_runtime_sim.perf.placer import place
    from buda_runtime_sim.perf.prepare import prepare

    config = PlacementConfig("gs_e150")
    prepared = prepare(mlp_graph(layers=3, width=512, rows=224), get_board("gs_e150"), config)
    frontiers = [B._Frontier.of(op) for op in prepared.placed]
    targets = set(B._targets(frontiers))
    assert {float(c) for f in frontiers for c in f.cycles} <= targets     # every place a pick changes
    best = B.best_target_plan(prepared, config, 64, frontiers).total_cycles
    low = min(float(f.cycles.min()) for f in frontiers)
    high = max(float(f.cycles.max()) for f in frontiers)
    for target in np.geomspace(low / 2, high * 2, 400):
        schedule = [(op.name, f.pick(target), op.op.subgraph) for op, f in zip(prepared.placed, frontiers)]
        placements = place(schedule, prepared.board)
        assert best <= sum(e.total_cycles for e in epoch_costs(prepared, placements, 64)) * (1 + 1e-9)
