"""A sweep's report: DIR/results.csv (one row per job) and DIR/index.html in the Reportify style.

The page is static: index.html, sweep.js and the CSS are copied from the package, the rows go
into data.js (`window.SWEEP = {...}`), so it opens from disk or from `tvm-buda reportify DIR`.
sweep.js draws the sortable, filterable table and the plots (inline SVG, no library, no CDN).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from .store import write_atomically
from .table import COLUMNS, SweepTable

STATIC = Path(__file__).parent / "static"
REPORTIFY_CSS = Path(__file__).parent.parent / "reports" / "static" / "reportify.css"


def write_report(out: Path, rows: list[dict], total: int | None = None) -> Path:
    """Write results.csv, data.js and the static page; returns index.html's path."""
    out.mkdir(parents=True, exist_ok=True)
    table = SweepTable(rows)
    write_atomically(out / "results.csv", table.to_csv())
    data = {"columns": list(COLUMNS), "rows": [{k: r.get(k) for k in COLUMNS} for r in rows],
            "total": len(rows) if total is None else total, "summary": table.summary(),
            "written": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())}
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")   # data never closes a <script>
    write_atomically(out / "data.js", f"window.SWEEP = {text};\n")
    for src in [*STATIC.iterdir(), REPORTIFY_CSS]:
        if src.is_file():
            shutil.copyfile(src, out / src.name)
    return out / "index.html"
