import pytest


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported once (seconds); tests needing it are skipped where it is not installed."""
    return pytest.importorskip("tensorflow")
