import pytest


@pytest.fixture(autouse=True)
def _state_dir(tmp_path, monkeypatch):
    """Each test sees only the simulated devices it starts itself."""
    monkeypatch.setenv("TT_SMI_STATE_DIR", str(tmp_path / "devices"))
    return tmp_path / "devices"
