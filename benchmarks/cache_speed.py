"""Cold vs warm compile of a 12-layer BERT-base encoder (seq 128) through the TVM cache.

    python benchmarks/cache_speed.py

Each compile runs in a fresh process (as a user's second run would); target: warm >= 10x faster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, time, torch, tvm_buda
from tvm_buda.demo_models import bert_encoder
encoder = bert_encoder(layers=12)
x = torch.randn(1, 128, 768)
start = time.perf_counter()
compiled = tvm_buda.compile_model(encoder, (x,), name="bert_base_encoder")
print(json.dumps({"compile_s": time.perf_counter() - start, "key": compiled.cache_key}))
"""


def _compile(cwd: str) -> dict:
    env = {**os.environ, "PYBUDA_ENABLE_TVM_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", CHILD], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as cwd:
        cold = _compile(cwd)
        warm = _compile(cwd)
    assert cold["key"] == warm["key"]
    ratio = cold["compile_s"] / warm["compile_s"]
    verdict = "met" if ratio >= 10 else f"MISSED: {10 / ratio:.2f}x short"
    print(f"BERT-base encoder (12 layers, seq 128): cold {cold['compile_s']:.2f} s, warm {warm['compile_s']:.2f} s, "
          f"warm is {ratio:.1f}x faster (target >= 10x: {verdict})")


if __name__ == "__main__":
    main()
