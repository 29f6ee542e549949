"""The examples in docs/generation.md run as written (one namespace, in order)."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "generation.md"


def test_generation_examples_run():
    namespace = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["agreement"] == 1.0                        # Float32/HiFi4: token for token
    assert sorted(namespace["decoder"].programs.compiled) == [(2, 1, 32), (2, 32, 32)]
    assert namespace["decoder"].steps == 16
    assert len(namespace["tokens"]) == 16
    perf = namespace["perf"]
    assert perf.board == "wh_n150" and perf.tokens_per_second > 0
    assert perf.seconds_for(16) > 15 * perf.seconds_per_token
