"""The placer: ops, in schedule order and with their grid shapes, onto the core grid.

Shelf packing, like reading a page: ops go left to right along a shelf as tall as its tallest
op; a full shelf opens the next one below; a full chip continues on the next chip of the board;
a full board starts a new epoch. A new device program (subgraph) or an op named in
`set_epoch_break` always starts a new epoch; an op named in `set_chip_break` starts on the next
chip (a new epoch on single-chip boards or when no chip is left).
"""

from __future__ import annotations

from dataclasses import dataclass

from .boards import Board
from .config import named


@dataclass(frozen=True)
class Placement:
    op: str
    epoch: int
    chip: int
    row: int          # top-left core, logical grid coordinates
    col: int
    grid: tuple[int, int]

    @property
    def cores(self) -> int:
        return self.grid[0] * self.grid[1]


class _Cursor:
    def __init__(self, board: Board):
        self.board = board
        self.epoch = -1
        self.new_epoch()

    def new_epoch(self) -> None:
        self.epoch += 1
        self.chip = 0
        self.empty = True
        self._new_chip_area()

    def _new_chip_area(self) -> None:
        self.shelf_row, self.shelf_height, self.col = 0, 0, 0

    def next_chip(self) -> None:
        self.chip += 1
        self._new_chip_area()
        if self.chip == self.board.chips:
            self.new_epoch()

    def place(self, name: str, grid: tuple[int, int]) -> Placement:
        rows, cols = grid
        if self.col + cols > self.board.grid_cols:            # next shelf
            self.shelf_row += self.shelf_height
            self.shelf_height, self.col = 0, 0
        if self.shelf_row + rows > self.board.op_grid_rows:      # next chip, or next epoch
            self.next_chip()
        placement = Placement(name, self.epoch, self.chip, self.shelf_row, self.col, grid)
        self.col += cols
        self.shelf_height = max(self.shelf_height, rows)
        self.empty = False
        return placement


def place(ops: list[tuple[str, tuple[int, int], int]], board: Board, epoch_breaks=frozenset(),
          chip_breaks=frozenset()) -> list[Placement]:
    """ops: (name, (rows, cols), subgraph) in schedule order -> one Placement per op."""
    cursor = _Cursor(board)
    placements = []
    previous_subgraph = None
    for name, grid, subgraph in ops:
        if grid[0] > board.op_grid_rows or grid[1] > board.grid_cols:
            raise ValueError(f"op {name!r}: grid {grid} does not fit the {board.op_grid_rows}x{board.grid_cols} core grid")
        starts_epoch = subgraph != previous_subgraph or named(epoch_breaks, name)
        if starts_epoch and not cursor.empty:
            cursor.new_epoch()
        elif named(chip_breaks, name) and not cursor.empty:
            cursor.next_chip()
        placements.append(cursor.place(name, grid))
        previous_subgraph = subgraph
    return placements
