"""PerfAnalyzerApp: the summary screen first; N/P walk the epochs, E jumps, F full names, H help."""

from __future__ import annotations

from textual.app import App

from .data import PerfData
from .screens import EPOCH_HELP, SUMMARY_HELP, EpochPrompt, EpochScreen, HelpScreen, SummaryScreen


class PerfAnalyzerApp(App):
    TITLE = "Perf Analyzer"
    CSS_PATH = "app.tcss"
    BINDINGS = [("n", "next_epoch", "Next epoch"), ("p", "previous_epoch", "Previous"), ("e", "goto_epoch", "Epoch #"),
                ("f", "toggle_names", "Full names"), ("h", "help", "Help"), ("q", "quit", "Quit")]

    def __init__(self, data: PerfData):
        super().__init__()
        self.data = data
        self.epoch: int | None = None   # None: the summary screen
        self.full_names = False
        self.sub_title = f"{data.model} · estimates from the tvm-buda perf model"

    def on_mount(self) -> None:
        self.push_screen(SummaryScreen(self.data))

    @property
    def epoch_count(self) -> int:
        return len(self.data.report["epochs"])

    def show(self, epoch: int | None) -> None:
        self.epoch = epoch
        self.switch_screen(SummaryScreen(self.data) if epoch is None else EpochScreen(self.data, epoch, self.full_names))

    def action_next_epoch(self) -> None:
        if self.epoch_count == 0:
            return self.notify("this model has no device epochs", severity="warning")
        if self.epoch is None or self.epoch + 1 < self.epoch_count:
            self.show(0 if self.epoch is None else self.epoch + 1)
        else:
            self.notify("this is the last epoch")

    def action_previous_epoch(self) -> None:
        if self.epoch is not None:
            self.show(self.epoch - 1 if self.epoch > 0 else None)

    def action_goto_epoch(self) -> None:
        if self.epoch_count:
            self.push_screen(EpochPrompt(self.epoch_count), lambda epoch: epoch is not None and self.show(epoch))

    def action_toggle_names(self) -> None:
        self.full_names = not self.full_names
        if isinstance(self.screen, EpochScreen):
            self.screen.full_names = self.full_names
            self.screen.fill()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(SUMMARY_HELP if self.epoch is None else EPOCH_HELP))
