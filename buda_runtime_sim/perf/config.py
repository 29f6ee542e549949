"""PlacementConfig: the user's say in the perf model (board, harvesting, balancer/placer overrides)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .boards import Board, default_board_name, get_board
from .chips import board_with_chips

# CompilerConfig field -> PlacementConfig field, read when present (see from_compiler_config).
COMPILER_CONFIG_FIELDS = {
    "device_config": "device_config",
    "harvested_rows": "harvested_rows",
    "op_size_overrides": "op_sizes",             # filled by pybuda.config.override_op_size
    "epoch_breaks": "epoch_breaks",              # filled by pybuda.config.set_epoch_break
    "chip_breaks": "chip_breaks",                # filled by pybuda.config.set_chip_break
    "place_on_one_row": "place_on_one_row",
    "balancer_policy": "balancer_policy",
    "default_dram_parameters": "default_dram_parameters",
    "dram_parameter_overrides": "dram_parameters",   # filled by pybuda.config.override_dram_parameters
}
# Balancer policies that give every op its smallest grid (PyBuda's verification policies).
SMALLEST_GRID_POLICIES = frozenset({"MinimizeGrid", "MaximizeTMinimizeGrid"})


def _flat_names(names) -> frozenset[str]:
    """set_epoch_break accepts a name or a list; PyBuda stores a list of lists."""
    if isinstance(names, str):
        return frozenset({names})
    return frozenset(n for item in names for n in _flat_names(item))


@dataclass(frozen=True)
class PlacementConfig:
    device_config: str = field(default_factory=default_board_name)
    harvested_rows: tuple[int, ...] | None = None   # None: the board's default mask
    op_sizes: dict = field(default_factory=dict)     # op name -> (rows, cols): override_op_size
    epoch_breaks: frozenset = frozenset()            # op names starting a new epoch: set_epoch_break
    chip_breaks: frozenset = frozenset()             # op names starting on the next chip: set_chip_break
    place_on_one_row: bool = False                   # every op gets a single-row grid (1 x c)
    balancer_policy: str = "default"                 # MinimizeGrid / MaximizeTMinimizeGrid: 1x1 grids
    default_dram_parameters: bool | None = None      # True: weights stream from DRAM every run
    dram_parameters: dict = field(default_factory=dict)   # op name -> bool: override_dram_parameters
    num_chips: int | None = None                     # chips of the board the device uses (None: all)

    def __post_init__(self):
        sizes = {str(k): (int(v[0]), int(v[1])) for k, v in dict(self.op_sizes).items()}
        for name, (r, c) in sizes.items():
            if r < 1 or c < 1:
                raise ValueError(f"override_op_size({name!r}, {(r, c)}): grid dimensions must be positive")
        object.__setattr__(self, "op_sizes", sizes)
        object.__setattr__(self, "epoch_breaks", _flat_names(self.epoch_breaks))
        object.__setattr__(self, "chip_breaks", _flat_names(self.chip_breaks))
        if self.harvested_rows is not None:
            object.__setattr__(self, "harvested_rows", tuple(int(r) for r in self.harvested_rows))

    def board(self) -> Board:
        return board_with_chips(get_board(self.device_config, self.harvested_rows), self.num_chips)

    def with_options(self, **options) -> "PlacementConfig":
        """A copy with the given fields replaced; None values leave a field alone."""
        return replace(self, **{k: v for k, v in options.items() if v is not None})

    @classmethod
    def from_compiler_config(cls, config) -> "PlacementConfig":
        """Read the fields named in COMPILER_CONFIG_FIELDS that a CompilerConfig has."""
        values = {ours: getattr(config, theirs) for theirs, ours in COMPILER_CONFIG_FIELDS.items()
                  if getattr(config, theirs, None) is not None}
        return cls(**values)

    def to_dict(self) -> dict:
        return {"device_config": self.device_config,
                "harvested_rows": None if self.harvested_rows is None else list(self.harvested_rows),
                "op_sizes": {k: list(v) for k, v in self.op_sizes.items()},
                "epoch_breaks": sorted(self.epoch_breaks), "chip_breaks": sorted(self.chip_breaks),
                "place_on_one_row": self.place_on_one_row, "balancer_policy": self.balancer_policy,
                "default_dram_parameters": self.default_dram_parameters,
                "dram_parameters": dict(self.dram_parameters), "num_chips": self.num_chips}

    def weights_in_dram(self, name: str) -> bool:
        """Whether an op's weights stay in DRAM (streamed every run) rather than loaded into L1."""
        forced = lookup(self.dram_parameters, name)
        return bool(self.default_dram_parameters) if forced is None else bool(forced)


def lookup(mapping, name: str):
    """Find an op's entry by its full name or, for names qualified as "module.op", by the op part."""
    if name in mapping:
        return mapping[name]
    return mapping.get(name.rsplit(".", 1)[-1])


def named(names, name: str) -> bool:
    """Whether a set of op names holds `name` (full, or the op part of "module.op")."""
    return name in names or name.rsplit(".", 1)[-1] in names
