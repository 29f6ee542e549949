"""Writing a report folder: static pages once, then one data file per compilation and the index.

Layout (default `reportify/`, moved by PYBUDA_REPORTIFY_DIR):
    index.html, model.html, reportify.js, reportify.css, vendor/   static, copied from the package
    index.json, index_data.js                                       every compilation, newest first
    models/<id>/data.js                                             one compilation's passes, modules, placement, perf

Data files are JavaScript assignments (`window.REPORTIFY_... = {...}`), so the pages also work
opened from disk, without the server.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
from pathlib import Path

import filelock

from buda_runtime_sim.env import REPORTIFY, REPORTIFY_DIR

from .graphs import module_graph, op_edges

STATIC = Path(__file__).parent / "static"
MAX_INDEX = 200  # compilations kept in the index (their folders too)


def report_dir() -> Path:
    return Path(REPORTIFY_DIR.get() or "reportify")


def new_recorder():
    from .recorder import PassRecorder

    return PassRecorder()


def enabled(config) -> bool:
    return REPORTIFY.get() == "1" or bool(getattr(config, "enable_reportify", False))


def _install_static(root: Path) -> None:
    for src in STATIC.rglob("*"):
        if src.is_file():
            dst = root / src.relative_to(STATIC)
            if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime or dst.stat().st_size != src.stat().st_size:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


def _js(name: str, data) -> str:
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")  # data never closes a <script>
    return f"window.{name} = {text};\n"


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _placement(report, graphs: list) -> list[dict]:
    """Per epoch: grid size and placed ops with their edges (names as in the perf report)."""
    multi = len(graphs) > 1
    edges = []
    for module, graph in graphs:
        prefix = f"{module}." if multi else ""
        edges += [(prefix + a, prefix + b) for a, b in op_edges(graph)]
    rows, cols = report.board.grid_shape
    epochs = []
    for epoch in report.epochs:
        ops = [o for o in report.ops if o.epoch == epoch.index and o.grid]
        names = {o.name for o in ops}
        epochs.append({
            "index": epoch.index, "grid": [rows, cols], "chips": epoch.chips, "cycles": epoch.stage_cycles,
            "samples_per_second": epoch.samples_per_second, "slowest_op": epoch.slowest_op,
            "ops": [{"name": o.name, "op_type": o.op_type, "grid": list(o.grid), "row": o.row, "col": o.col,
                     "chip": o.chip, "cycles": round(o.cycles), "data_format": o.data_format,
                     "math_fidelity": o.math_fidelity, "bound": o.bound, "tiles": o.tiles} for o in ops],
            "edges": [[a, b] for a, b in edges if a in names and b in names],
        })
    return epochs


def write_report(compiled, recorder, directory: Path | None = None) -> Path:
    """Write one compilation's report; returns the model page's folder."""
    root = Path(directory) if directory is not None else report_dir()
    root.mkdir(parents=True, exist_ok=True)
    _install_static(root)
    report = compiled.perf_report()
    rows = {o.name: {"cycles": o.cycles, "grid": o.grid, "epoch": o.epoch} for o in report.ops}
    numerics = compiled.config.numerics()
    modules = [(g.module_name, g) for _, g in compiled.subgraphs]
    multi = len(modules) > 1
    passes = list(recorder.snapshots) if recorder is not None else []
    for module, graph in modules:
        own = {k.split(".", 1)[1]: v for k, v in rows.items() if k.startswith(module + ".")} if multi else rows
        passes.append({"name": f"module {module}", "kind": "module", "graph": module_graph(graph, numerics, own),
                       "why": f"generated PyBuda module {module}.py"})
    now = datetime.datetime.now()
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", compiled.name)[:60] or "model"
    with filelock.FileLock(str(root / ".index.lock")):
        index_path = root / "index.json"
        index = json.loads(index_path.read_text()) if index_path.is_file() else []
        model_id = f"{stem}_{now:%Y%m%d_%H%M%S_%f}"
        summary = compiled.partition_summary()
        entry = {"id": model_id, "model": compiled.name, "framework": compiled.framework,
                 "time": now.isoformat(timespec="seconds"), "device_share": round(summary.device_fraction, 4),
                 "graph_breaks": summary.graph_breaks, "samples_per_second": report.samples_per_second,
                 "board": report.board.name}
        folder = root / "models" / model_id
        folder.mkdir(parents=True, exist_ok=True)
        data = {**entry, "passes": passes, "placement": _placement(report, modules),
                "perf": {"summary": report.summary(), "ops": json.loads(json.dumps(report.to_dict()["ops"]))},
                "device_ops": compiled.device_ops(), "cpu_ops": compiled.cpu_ops()}
        _atomic(folder / "data.js", _js("REPORTIFY_MODEL", data))
        index.insert(0, entry)
        for old in index[MAX_INDEX:]:
            shutil.rmtree(root / "models" / old["id"], ignore_errors=True)
        index = index[:MAX_INDEX]
        _atomic(index_path, json.dumps(index, indent=1))
        _atomic(root / "index_data.js", _js("REPORTIFY_INDEX", index))
    return folder
