"""Compare structured outputs (single, tuple, dict) with PyBuda's rule."""

from tests.helpers import assert_matches_golden


def assert_outputs_match(outputs, golden, what: str = "output") -> None:
    if isinstance(golden, dict):
        assert isinstance(outputs, dict) and list(outputs) == list(golden), (list(outputs), list(golden))
        for key in golden:
            assert_matches_golden(outputs[key], golden[key], f"{what}[{key!r}]")
    elif isinstance(golden, (tuple, list)):
        assert isinstance(outputs, tuple) and len(outputs) == len(golden), (type(outputs), len(golden))
        for i, (out, gold) in enumerate(zip(outputs, golden)):
            assert_matches_golden(out, gold, f"{what}[{i}]")
    else:
        assert_matches_golden(outputs, golden, what)
