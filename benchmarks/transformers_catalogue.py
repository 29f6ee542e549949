"""Write tvm_buda/sweep/catalogues/transformers.json: every transformers model type whose tiny
random config (tvm_buda.sweep.hf_models) builds offline and runs a forward pass in PyTorch.

    python benchmarks/transformers_catalogue.py [--start N --stop M] [--jsonl probe.jsonl]

One process, one type after another (60 s each at most); a type that crashes the process stops
the run: restart with --start past it (rows already in --jsonl are kept). Whether tvm-buda then
compiles each of them is what `tvm-buda sweep catalogue:transformers` answers.
"""

import argparse
import json
import signal
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CATALOGUE = ROOT / "tvm_buda" / "sweep" / "catalogues" / "transformers.json"


def probe(model_type: str) -> dict:
    import torch

    from tvm_buda.sweep import hf_models

    model, inputs = hf_models.build(model_type)
    with torch.no_grad():
        out = model(*inputs)
    return {"shape": list(out.shape), "inputs": [list(i.shape) for i in inputs],
            "parameters": sum(p.numel() for p in model.parameters())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int)
    parser.add_argument("--jsonl", default="transformers_probe.jsonl", help="one line per type probed")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import torch
    import transformers

    from tvm_buda.sweep.hf_models import model_types

    torch.set_num_threads(1)

    def alarm(*_):
        raise TimeoutError("over 60 s")

    signal.signal(signal.SIGALRM, alarm)
    with open(args.jsonl, "a") as log:
        for model_type in model_types()[args.start:args.stop]:
            start = time.time()
            signal.alarm(60)
            try:
                row = {"type": model_type, "ok": True, **probe(model_type)}
            except Exception as exc:  # noqa: BLE001 - a type that cannot be built is a row
                row = {"type": model_type, "ok": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            signal.alarm(0)
            row["s"] = round(time.time() - start, 2)
            log.write(json.dumps(row) + "\n")
            log.flush()
    rows = {}
    for line in Path(args.jsonl).read_text().splitlines():
        row = json.loads(line)
        rows[row["type"]] = row
    ok = sorted(t for t, r in rows.items() if r["ok"])
    CATALOGUE.write_text(json.dumps({
        "about": "transformers model types whose tiny random config (tvm_buda.sweep.hf_models) builds offline "
                 "and runs in PyTorch; written by benchmarks/transformers_catalogue.py",
        "transformers": transformers.__version__, "probed": len(rows),
        "models": [f"hf:{t}" for t in ok]}, indent=1) + "\n")
    print(f"{len(ok)} of {len(rows)} types build and run; written {CATALOGUE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
