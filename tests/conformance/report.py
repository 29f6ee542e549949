"""Conformance summary: `python -m tests.conformance.report [onnx|torch|all] [--json out.json] [--from in.json] [--only TEXT]`.

Runs every case of the chosen suites (or reads an earlier run's JSON), then prints per-suite counts
for each column, the device share of each case buda ran, and the cases plain TVM passes and buda
does not, with buda's reason. The full ONNX set takes ~20 minutes on 2 cores (plain TVM compiling
the light CNNs for llvm is most of it); the torch catalogue ~10.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict


def run_suite(name: str, only: str | None = None) -> dict:
    """{case id: {column: CaseResult dict}} for one suite, printing a line per case."""
    from . import onnx_suite, torch_suite

    suite = onnx_suite if name == "onnx" else torch_suite
    rows = {}
    for case in suite.cases():
        if only and only not in case.id:
            continue
        rows[case.id] = {column: run(case).to_dict() for column, run in suite.COLUMNS.items()}
        verdicts = " ".join(f"{c}={'pass' if r['passed'] else 'FAIL'}" for c, r in rows[case.id].items())
        print(f"  {case.id}: {verdicts}", file=sys.stderr, flush=True)
    return rows


def group_of(case_id: str, suite: str) -> str:
    return case_id.split("/")[0] if suite == "onnx" else "module_db"


def summary(results: dict) -> str:
    """The printed report for {suite: {case id: {column: result}}}."""
    lines = []
    for suite, rows in results.items():
        groups = defaultdict(dict)
        for case_id, row in rows.items():
            groups[group_of(case_id, suite)][case_id] = row
        columns = list(next(iter(rows.values()))) if rows else []
        lines.append(f"## {suite}")
        lines.append("| group | cases | " + " | ".join(columns) + " | TVM passes, buda fails | mean device share |")
        lines.append("|---" * (len(columns) + 4) + "|")
        for group, members in [*sorted(groups.items()), ("total", rows)]:
            counts = [sum(r[c]["passed"] for r in members.values()) for c in columns]
            gap = len(gaps(members))
            shares = [r["buda"]["device_share"] for r in members.values() if r["buda"]["passed"]]
            mean = f"{sum(shares) / len(shares):.0%}" if shares else "-"
            lines.append(f"| {group} | {len(members)} | " + " | ".join(map(str, counts)) + f" | {gap} | {mean} |")
        lines.append("")
        lines.append("device share per case (buda passes):")
        for case_id, row in rows.items():
            if row["buda"]["passed"] and row["buda"]["device_share"] is not None:
                lines.append(f"  {row['buda']['device_share']:5.0%}  {case_id}")
        lines.append("")
        lines.append("plain TVM passes, buda does not:")
        for case_id, reason in gaps(rows).items():
            lines.append(f"  {case_id}: {reason}")
        lines.append("")
    return "\n".join(lines)


def gaps(rows: dict) -> dict:
    return {k: r["buda"]["reason"] for k, r in rows.items() if r["tvm"]["passed"] and not r["buda"]["passed"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.report", description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default="all", choices=["onnx", "torch", "all"])
    parser.add_argument("--json", help="write the raw results here")
    parser.add_argument("--from", dest="source", help="summarise an earlier --json instead of running")
    parser.add_argument("--only", help="run only cases whose id contains this text")
    args = parser.parse_args(argv)
    if args.source:
        with open(args.source) as f:
            results = json.load(f)
    else:
        suites = ["onnx", "torch"] if args.suite == "all" else [args.suite]
        results = {s: run_suite(s, args.only) for s in suites}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
