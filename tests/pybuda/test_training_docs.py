"""The examples in docs/training.md run as written (one namespace, in order)."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_training_examples_run():
    namespace = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    losses = namespace["losses"]
    assert len(losses) == 20 and losses[-1] < losses[0]
    assert len(namespace["checkpoints"]) == 3
    assert namespace["step"].seconds > namespace["step"].forward.seconds
