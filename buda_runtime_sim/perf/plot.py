"""Placement pictures: one PNG per epoch showing the core grid and the ops placed on it, like
PyBuda's placement report. The epoch's slowest op is outlined in red.

Uses matplotlib's Agg canvas directly (no pyplot), so it never touches a display or global state.
"""

from __future__ import annotations

from pathlib import Path

from . import ops as K

KIND_COLOURS = {
    K.MATMUL: "#f4a259", K.CONV: "#f4a259", K.DEPTHWISE: "#e9c46a", K.POOL: "#8ab17d",
    K.BINARY: "#5b8e7d", K.MULTIPLY: "#5b8e7d", K.SFPU: "#bc4b51", K.REDUCE: "#8d99ae",
    K.SOFTMAX: "#a26769", K.LAYERNORM: "#6d597a", K.MOVE: "#adb5bd",
}
CELL_INCHES = 0.55
MAX_LABEL = 18


def _output_paths(path, count: int) -> list[Path]:
    path = Path(path)
    if path.suffix.lower() == ".png":
        path.parent.mkdir(parents=True, exist_ok=True)
        return [path.with_name(f"{path.stem}_epoch{i}.png") for i in range(count)]
    path.mkdir(parents=True, exist_ok=True)
    return [path / f"epoch{i}.png" for i in range(count)]


def plot_epochs(report, path) -> list[Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    board = report.board
    rows, cols = board.grid_shape
    paths = _output_paths(path, len(report.epochs))
    for epoch, out in zip(report.epochs, paths):
        fig = Figure(figsize=(board.chips * cols * CELL_INCHES + 1.5, rows * CELL_INCHES + 1.4))
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, board.chips, squeeze=False)[0]
        for chip, ax in enumerate(axes):
            _draw_grid(ax, rows, cols, chip if board.chips > 1 else None)
            for op in report.ops:
                if op.epoch == epoch.index and op.chip == chip:
                    _draw_op(ax, op, slowest=op.name == epoch.slowest_op)
        fig.suptitle(f"{report.model} on {board.name}: epoch {epoch.index} - {epoch.ops} ops on {epoch.cores} cores, "
                     f"stage {epoch.stage_cycles:,.0f} cycles, {epoch.samples_per_second:,.0f} samples/s",
                     fontsize=8)
        fig.savefig(out, dpi=100)
    return paths


def _draw_grid(ax, rows: int, cols: int, chip) -> None:
    from matplotlib.patches import Rectangle

    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor="#f8f9fa", edgecolor="#dee2e6", linewidth=0.5))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)      # row 0 at the top, as on the chip
    ax.set_aspect("equal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(labelsize=6)
    if chip is not None:
        ax.set_title(f"chip {chip}", fontsize=7)


def _draw_op(ax, op, slowest: bool) -> None:
    from matplotlib.patches import Rectangle

    r, c = op.grid
    ax.add_patch(Rectangle((op.col + 0.05, op.row + 0.05), c - 0.1, r - 0.1,
                           facecolor=KIND_COLOURS.get(op.kind, "#adb5bd"), alpha=0.9,
                           edgecolor="red" if slowest else "black", linewidth=2.0 if slowest else 0.6))
    name = op.name if len(op.name) <= MAX_LABEL else op.name[: MAX_LABEL - 1] + "~"
    ax.text(op.col + c / 2, op.row + r / 2, f"{name}\n{r}x{c}", ha="center", va="center",
            fontsize=max(4, min(7, 3 + c)), clip_on=True)
