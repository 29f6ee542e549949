"""The table a sweep returns: one row (a dict) per job, in job order, with the report's columns."""

from __future__ import annotations

import csv
import io
from collections import Counter

COLUMNS = ("model", "framework", "data_format", "fidelity", "device_config", "status", "pcc", "max_abs_error",
           "atol", "device_share", "device_ops", "cpu_ops", "graph_breaks", "compile_s", "run_s",
           "samples_per_second", "wall_s", "stage", "error", "worker", "finished", "key")


class SweepTable:
    """Rows as dicts (`table[i]`, iteration, `len`); `to_csv()`, `summary()`, `to_pandas()` if
    pandas is installed."""

    def __init__(self, rows: list[dict]):
        self.rows = [dict(r) for r in rows]

    columns = COLUMNS

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, index):
        return self.rows[index]

    def where(self, **fields) -> "SweepTable":
        """The rows whose fields equal the given values, e.g. `table.where(status="PASS")`."""
        return SweepTable([r for r in self.rows if all(r.get(k) == v for k, v in fields.items())])

    def column(self, name: str) -> list:
        return [r.get(name) for r in self.rows]

    def summary(self) -> dict[str, int]:
        """Jobs per status."""
        return dict(Counter(r.get("status", "?") for r in self.rows))

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in COLUMNS})
        return out.getvalue()

    def to_pandas(self):
        import pandas

        return pandas.DataFrame(self.rows, columns=list(COLUMNS))

    def __str__(self) -> str:
        shown = ("model", "data_format", "fidelity", "device_config", "status", "pcc", "samples_per_second", "error")
        cells = [[_cell(r.get(c)) for c in shown] for r in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(shown)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(shown, widths))]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"SweepTable({len(self.rows)} jobs: {self.summary()})"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
