"""Assertions shared by tests."""

from buda_runtime_sim.verify import compare


def assert_matches_golden(output, golden, what: str = "output") -> None:
    result = compare(output, golden)
    assert result.passed, f"{what}: {result}"
