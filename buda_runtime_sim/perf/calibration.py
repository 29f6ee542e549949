"""Silicon op measurements (perf_data/, vendored) as rows, a held-out split, fitting and error statistics.

The measurements are tt-budabackend perf_lib sweeps: one op on one core, cycles per input for a
block of t x mblock x ublock output tiles (see perf_data/README.md). `load_rows` reads the
float-format matmul, depthwise, eltwise, SFPU and reduce files into one table; `split` puts every
configuration in the fit half or the held-out half by a hash of its settings (repeated passes of
one configuration land in the same half); `fit` solves op_model's formulas for non-negative
coefficients minimising relative error; `errors` compares any coefficients with measured rows.
Used by benchmarks/perf_calibration.py and the calibration test, never by estimate().
"""

from __future__ import annotations

import csv
import itertools
import math
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import op_model as M

# The measurements ship with the package (perf_data/README.md: source, licence, column reference).
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "perf_data"
ARCH_DIRS = {"grayskull": M.GS, "wormhole_b0": M.WH}
FIDELITY_PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
SKIPPED = ("int8", "int32", "quantization", "sparse", "splice")   # outside the float cycle model
INPUTS_PER_TEST = 128   # raw sweep files store total-runtime over 128 inputs
# Issue 17's accuracy targets on held-out rows, per arch, for these op classes.
TARGETS = ("matmul", "eltwise", "sfpu")
TARGET_MEDIAN, TARGET_P90 = 0.15, 0.35


@dataclass(frozen=True)
class Rows:
    """One measured configuration per index; `key` is the coefficient set (op_model.CoeffKey) it belongs to."""

    key: list
    family: np.ndarray
    setting: np.ndarray      # columns: t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases, z
    cycles: np.ndarray
    config_id: list          # the settings as text: identical configurations share it
    source: list             # file name

    def __len__(self) -> int:
        return len(self.cycles)

    def select(self, mask) -> "Rows":
        idx = np.flatnonzero(mask)
        return Rows([self.key[i] for i in idx], self.family[idx], self.setting[idx], self.cycles[idx],
                    [self.config_id[i] for i in idx], [self.source[i] for i in idx])


def _op_of(path: Path, row: dict) -> tuple[str, str]:
    """(op name, variant) of a row, from its file name and type column."""
    stem = path.name.replace("-op-performance.csv", "").replace("-performance.csv", "")
    variant = ""
    if "approx" in stem:
        variant, stem = M.APPROX, stem.replace("-approx", "")
    if stem.startswith("matmul"):
        variant = M.L1_ACC if "l1-acc" in stem else ""
        return "matmul", variant
    if stem.startswith("nop"):
        return "nop", variant
    if stem.startswith("whb0-reduce-"):
        return "reduce_" + stem[-1], variant
    op = row.get("Unary-Type") or row.get("Binary-Type") or stem
    return op.replace("-", "_"), variant


def _int(row, *names, default=1) -> int:
    for name in names:
        if row.get(name) not in (None, "", "N/A"):
            return int(row[name])
    return default


def _parse(path: Path, arch: str):
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            op, variant = _op_of(path, row)
            if path.name.startswith("sine") and op != "sine":
                continue                        # the sine file repeats the cosine rows
            df = row.get("input0_df") or row.get("input0")
            fidelity = row["math_fidelity"]
            if "Test-ID" in row:
                cycles = float(row["total-runtime"]) / INPUTS_PER_TEST
                setting = (_int(row, "output_t"), _int(row, "output_mb_r"), _int(row, "output_mb_c"),
                           _int(row, "output_ub_r"), _int(row, "output_ub_c"))
            else:
                cycles = float(row["runtime"])
                setting = (_int(row, "t"), _int(row, "mblock_m"), _int(row, "mblock_n"),
                           _int(row, "ublock_rt"), _int(row, "ublock_ct"))
            setting += (_int(row, "m_k"), _int(row, "u_kt"), FIDELITY_PHASES[fidelity], _int(row, "z"))
            family = M.family_of(op)
            key = M.CoeffKey(arch, op, variant, M.df_class(df))
            yield key, family, setting, cycles, f"{key}|{setting}"


def load_rows(data_dir: Path | str | None = None) -> Rows:
    """Every float-format row of the sweep files under `data_dir` (default: DEFAULT_DATA_DIR)."""
    data_dir = Path(data_dir or DEFAULT_DATA_DIR)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"perf measurements not found at {data_dir}: pass a folder laid out as "
                                f"{DEFAULT_DATA_DIR} (grayskull/, wormhole_b0/ and params/)")
    keys, families, settings, cycles, ids, sources = [], [], [], [], [], []
    for sub, arch in ARCH_DIRS.items():
        for path in sorted((data_dir / sub).glob("*.csv")):
            if any(s in path.name for s in SKIPPED):
                continue
            for key, family, setting, cyc, cid in _parse(path, arch):
                keys.append(key), families.append(family), settings.append(setting)
                cycles.append(cyc), ids.append(cid), sources.append(f"{sub}/{path.name}")
    return Rows(keys, np.asarray(families), np.asarray(settings, dtype=np.float64), np.asarray(cycles),
                ids, sources)


def split(rows: Rows) -> tuple[Rows, Rows]:
    """(fit half, held-out half): a configuration's half is fixed by a CRC of its settings."""
    held = np.array([zlib.crc32(cid.encode()) % 2 == 1 for cid in rows.config_id])
    return rows.select(~held), rows.select(held)


def _features(rows: Rows) -> np.ndarray:
    """Feature rows padded with zeros to the widest formula (families differ in term count)."""
    out = np.zeros((len(rows), M.MAX_TERMS))
    for family in set(rows.family.tolist()):
        mask = rows.family == family
        terms = M.features(family, *rows.setting[mask].T)
        out[mask, :terms.shape[1]] = terms
    return out


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact non-negative least squares for a handful of columns: best feasible solution over all
    supports (2^n least-squares solves, n <= 6)."""
    n = a.shape[1]
    best, best_res = np.zeros(n), float(b @ b)
    for size in range(1, n + 1):
        for support in itertools.combinations(range(n), size):
            cols = list(support)
            x, *_ = np.linalg.lstsq(a[:, cols], b, rcond=None)
            if (x < 0).any():
                continue
            res = float(np.sum((a[:, cols] @ x - b) ** 2))
            if res < best_res:
                best = np.zeros(n)
                best[cols] = x
                best_res = res
    return best


def fit(rows: Rows) -> dict:
    """Coefficients per CoeffKey minimising the squared relative error, all non-negative."""
    feats = _features(rows)
    out = {}
    for key in sorted(set(rows.key)):
        idx = np.array([k == key for k in rows.key])
        weight = 1.0 / rows.cycles[idx]
        out[key] = tuple(float(round(v, 3)) for v in _nnls(feats[idx] * weight[:, None], np.ones(idx.sum())))
    return out


def predict(rows: Rows, coefficients: dict) -> np.ndarray:
    feats = _features(rows)
    table = np.array([np.pad(coefficients[k], (0, M.MAX_TERMS - len(coefficients[k]))) for k in rows.key])
    return np.einsum("ij,ij->i", feats, table)


@dataclass(frozen=True)
class ErrorStats:
    group: tuple            # (arch, op kind, op)
    rows: int
    median: float           # of |estimate / measured - 1|
    p90: float


def errors(rows: Rows, coefficients: dict, by=lambda key: (key.arch, M.family_of(key.op), key.op)) -> list[ErrorStats]:
    """Median and 90th percentile relative error of `coefficients` on `rows`, per group."""
    rel = np.abs(predict(rows, coefficients) / rows.cycles - 1)
    groups: dict = {}
    for i, key in enumerate(rows.key):
        groups.setdefault(by(key), []).append(rel[i])
    return [ErrorStats(g, len(v), float(np.median(v)), float(np.percentile(v, 90))) for g, v in sorted(groups.items())]


def by_target(key) -> tuple[str, str]:
    """(arch, class) for the targets: matmul; eltwise = binary ops and datacopy; sfpu = other unary ops."""
    family = M.family_of(key.op)
    if family == M.BINARY or key.op == "nop":
        return key.arch, "eltwise"
    return key.arch, {M.MATMUL: "matmul", M.UNARY: "sfpu"}.get(family, family)


def sparse_gather_fit(data_dir: Path | str | None = None) -> dict:
    """{df class: (cycles per output tile fitted on the fit half, held-out median error, p90 error)}
    for the sparse matmul sweep; the fit is the median of cycles per output tile."""
    path = Path(data_dir or DEFAULT_DATA_DIR) / "wormhole_b0" / "matmul-sparse-op-performance.csv"
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = {}
    for df, fidelities in (("bfp8", ("LoFi",)), ("fp16", ("HiFi2", "HiFi3", "HiFi4"))):
        chosen = [r for r in rows if r["math_fidelity"] in fidelities]
        cycles = np.array([float(r["runtime"]) for r in chosen])
        tiles = np.array([math.prod(int(r[k]) for k in ("output_t", "output_mb_r", "output_mb_c", "output_ub_r",
                                                         "output_ub_c")) for r in chosen])
        held = np.array([zlib.crc32(r["test_id"].encode()) % 2 == 1 for r in chosen])
        per_tile = float(np.median((cycles / tiles)[~held]))
        rel = np.abs(per_tile * tiles[held] / cycles[held] - 1)
        out[df] = (round(per_tile, 3), float(np.median(rel)), float(np.percentile(rel, 90)))
    return out
