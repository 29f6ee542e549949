"""The TVM cache: warm starts skip tracing and TVM; keys miss when anything that matters changes;
bad entries are rebuilt with a warning; no pickle anywhere."""

from pathlib import Path

import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp

PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


@pytest.fixture
def cache_on(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")


def _model_and_input(seed=0):
    torch.manual_seed(seed)
    return mlp(), torch.randn(8, 64)


def _entries():
    root = Path("generated_modules/tvm_cache")
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


def _forbid_tracing_and_tvm(monkeypatch):
    """Make every route into framework tracing or TVM compilation fail loudly."""
    import tvm
    from tvm.relax.frontend import torch as relax_torch

    import relay_passes.pipeline

    def forbidden(what):
        def fail(*args, **kwargs):
            raise AssertionError(f"{what} was called on a warm cache hit")

        return fail

    monkeypatch.setattr(torch.export, "export", forbidden("torch.export.export"))
    monkeypatch.setattr(relax_torch, "from_exported_program", forbidden("from_exported_program"))
    monkeypatch.setattr(tvm, "compile", forbidden("tvm.compile"))
    monkeypatch.setattr(relay_passes.pipeline.PassPipeline, "__call__", forbidden("the relay_passes pipeline"))


def test_warm_hit_skips_tracing_and_tvm(cache_on, monkeypatch):
    model, x = _model_and_input()
    cold = tvm_buda.compile_model(model, (x,))
    assert len(_entries()) == 1
    _forbid_tracing_and_tvm(monkeypatch)
    warm = tvm_buda.compile_model(model, (x,))
    assert warm.cache_key == cold.cache_key
    assert torch.equal(warm.run(x), cold.run(x))
    assert warm.device_ops() == cold.device_ops() and warm.cpu_ops() == cold.cpu_ops()
    assert [p.name for p in warm.generated_files] == [p.name for p in cold.generated_files]


def test_config_field_change_misses(cache_on):
    model, x = _model_and_input()
    first = tvm_buda.compile_model(model, (x,))
    cfg = tvm_buda.CompilerConfig(default_math_fidelity=tvm_buda.MathFidelity.HiFi4)
    second = tvm_buda.compile_model(model, (x,), config=cfg)
    cfg = tvm_buda.CompilerConfig()
    cfg.add_cpu_fallback_ops("nn.relu")
    third = tvm_buda.compile_model(model, (x,), config=cfg)
    assert len({first.cache_key, second.cache_key, third.cache_key}) == 3
    assert len(_entries()) == 3
    assert "nn.relu" in third.cpu_ops()


def test_input_shape_and_weight_change_miss(cache_on):
    model, x = _model_and_input()
    a = tvm_buda.compile_model(model, (x,))
    b = tvm_buda.compile_model(model, (torch.randn(4, 64),))
    with torch.no_grad():
        model.fc1.weight[0, 0] += 1.0
    c = tvm_buda.compile_model(model, (x,))
    assert len({a.cache_key, b.cache_key, c.cache_key}) == 3
    assert_matches_golden(c.run(x), golden(model, x))


def test_cache_off_by_default_stores_nothing():
    model, x = _model_and_input()
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cache_key is None and _entries() == []


def test_minus_one_clears_then_stores(monkeypatch):
    model, x = _model_and_input()
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    tvm_buda.compile_model(model, (x,))
    (old,) = _entries()
    host_before = sorted(p.name for p in old.glob("host-*.so"))
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "-1")
    compiled = tvm_buda.compile_model(model, (x,))
    (new,) = _entries()
    assert sorted(p.name for p in new.glob("host-*.so")) != host_before, "entry was not rebuilt"
    assert_matches_golden(compiled.run(x), golden(model, x))


@pytest.mark.parametrize("victim", ["host", "weights.safetensors", "modules/mlp_0.py",
                                    "modules/mlp_0.safetensors", "modules/mlp_0.json", "manifest.json"])
def test_corrupted_entry_is_rebuilt_with_a_warning(cache_on, victim):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = _entries()
    path = next(entry.glob("host-*.so")) if victim == "host" else entry / victim
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.warns(RuntimeWarning, match="unusable"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    assert_matches_golden(compiled.run(x), golden(model, x))
    tvm_buda.compile_model(model, (x,), name="mlp")  # the rebuilt entry is valid: no warning expected
    assert len(_entries()) == 1


def test_edited_entry_source_is_detected(cache_on):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = _entries()
    source = entry / "modules" / "mlp_0.py"
    source.write_text(source.read_text().replace("pybuda.op.Relu(", "pybuda.op.Identity("))
    with pytest.warns(RuntimeWarning, match="checksum"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    assert_matches_golden(compiled.run(x), golden(model, x))


def test_entry_from_another_version_is_ignored(cache_on, monkeypatch):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,))
    monkeypatch.setattr("tvm_buda.cache.store.versions", lambda: {"tvm_buda": "9.9", "apache-tvm": "0.99"})
    with pytest.warns(RuntimeWarning, match="another version"):
        compiled = tvm_buda.compile_model(model, (x,))
    assert_matches_golden(compiled.run(x), golden(model, x))


def test_no_file_in_the_cache_is_a_pickle(cache_on):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,))
    files = [p for p in Path("generated_modules").rglob("*") if p.is_file()]
    assert len(files) >= 8
    for path in files:
        assert not path.read_bytes()[:2] in PICKLE_MAGIC, f"{path} looks like a pickle"


def test_store_links_the_weights_and_reuses_their_recorded_checksums(cache_on, monkeypatch):
    # a cold compile with the cache on hashes no generated file again and copies no weights
    import json

    import codegen
    from tvm_buda.cache import store

    hashed = []
    monkeypatch.setattr(store, "sha256", lambda p: hashed.append(Path(p).name) or codegen.sha256(p))
    model, x = _model_and_input()
    compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = _entries()
    assert sorted(n for n in hashed if n.startswith("mlp_0")) == ["mlp_0.json"]  # only the small manifest
    weights = next(p for p in compiled.generated_files if p.suffix == ".safetensors")
    assert (entry / "modules" / weights.name).stat().st_ino == weights.stat().st_ino
    checksums = json.loads((entry / "manifest.json").read_text())["checksums"]
    assert checksums == {name: codegen.sha256(entry / name) for name in checksums}
