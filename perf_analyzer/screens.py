"""The analyzer's screens: model summary, one epoch's ops, help, and the epoch-number prompt."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from .data import PerfData

SUMMARY_HELP = """[b]Summary[/b]: one row per epoch.
cycles: pipeline stage cycles (the slowest op); speed: samples/s of the epoch alone;
util: math utilisation of the epoch in steady state; mm cores: cores running matmuls;
balancer util: utilisation if every op ran at its kernel (math-bound) speed.
The overall figure assumes a large batch (epoch switches and pipeline fill amortised).
All figures are estimates of the tvm-buda perf model, not measurements."""

EPOCH_HELP = """[b]Epoch[/b]: the epoch's ops, slowest first; the first bounds the epoch.
cycles: estimated with data movement; kernel: math-bound (infinite bandwidth);
bound: math, or the side that starves it (input bw / output bw);
in/out needed: bytes/cycle for the op to run at kernel speed; in/out: at the estimated speed."""

KEYS = "N next epoch   P previous   E go to epoch   F full op names   H help   Q quit"


class SummaryScreen(Screen):
    def __init__(self, data: PerfData):
        super().__init__(name="summary")
        self.data = data

    def compose(self) -> ComposeResult:
        yield Header()
        d = self.data
        yield Static(f"[b]{d.model}[/b] on {d.board}: {d.samples_per_second:,.1f} samples/s, "
                     f"utilisation {100 * d.utilisation:.1f}%, {len(d.report['epochs'])} epoch(s)", id="title")
        yield DataTable(id="summary-table", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("epoch", "cycles", "speed (samples/s)", "util", "mm cores", "balancer util", "ops",
                          "cores", "flag", "slowest op")
        for e in self.data.epochs():
            table.add_row(str(e.index), f"{e.cycles:,.0f}", f"{e.speed:,.1f}", f"{100 * e.util:.1f}%",
                          str(e.mm_cores), f"{100 * e.balancer_util:.1f}%", str(e.ops), str(e.cores),
                          e.flag, e.slowest_op, key=str(e.index))


class EpochScreen(Screen):
    def __init__(self, data: PerfData, epoch: int, full_names: bool):
        super().__init__(name=f"epoch-{epoch}")
        self.data, self.epoch, self.full_names = data, epoch, full_names

    def compose(self) -> ComposeResult:
        yield Header()
        summary = self.data.epochs()[self.epoch]
        yield Static(f"[b]Epoch {self.epoch}[/b] of {len(self.data.report['epochs'])}: {summary.cycles:,.0f} cycles, "
                     f"{summary.speed:,.1f} samples/s, util {100 * summary.util:.1f}%", id="title")
        yield DataTable(id="epoch-table", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.fill()

    def fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns("op", "type", "grid", "cycles", "kernel", "bound", "in needed", "out needed", "in", "out",
                          "flag")
        for op in self.data.epoch_ops(self.epoch):
            table.add_row(op.short_name(self.full_names), op.op_type, op.grid, f"{op.cycles:,.0f}",
                          f"{op.kernel:,.0f}", op.bound, f"{op.in_bw_needed:.1f}", f"{op.out_bw_needed:.1f}",
                          f"{op.in_bw:.1f}", f"{op.out_bw:.1f}", "◀ bounds epoch" if op.bounds_epoch else "")


class HelpScreen(ModalScreen):
    BINDINGS = [("escape,h,q", "dismiss", "Close")]

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(self.text + f"\n\n{KEYS}\n(Esc or H closes this window)")


class EpochPrompt(ModalScreen[int | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, epochs: int):
        super().__init__()
        self.epochs = epochs

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Static(f"Go to epoch (0-{self.epochs - 1}):")
            yield Input(id="epoch-input", type="integer")
            yield Static("", id="prompt-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            value = int(event.value)
        except ValueError:
            value = -1
        if 0 <= value < self.epochs:
            self.dismiss(value)
        else:
            self.query_one("#prompt-error", Static).update(f"no epoch {event.value!r}: enter 0-{self.epochs - 1}")
