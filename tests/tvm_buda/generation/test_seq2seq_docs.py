"""The encoder-decoder and speech examples of docs/generation.md run as written (one namespace, in order).

They are fenced ```py (test_generation_docs.py runs the ```python blocks of the decoder sections)."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "generation.md"


def test_encoder_decoder_and_speech_examples_run():
    namespace = {}
    blocks = re.findall(r"```py\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 3
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["agreement"] >= 0.9
    assert [key[:2] for key in namespace["t5"].seq2seq_runner.programs][1:] == [("first", 2), ("next", 2)] + [
        ("encoder", ("input_ids", (1, 32), "torch.int64")), ("first", 1), ("next", 1)]
    assert [list(a) for a in namespace["answer"]] == [["generated_text"]]
    assert [list(a) for a in namespace["summary"]] == [["summary_text"]]
    assert list(namespace["transcript"]) == ["text"] and namespace["transcript"]["text"]
