"""The TVM cache: warm starts skip tracing and TVM; keys miss when anything that matters changes;
bad entries are rebuilt with a warning; no pickle anywhere."""

import warnings
from pathlib import Path

import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp

from .entry_files import entries as _entries
from .entry_files import member_names, members, rewrite_member

PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


@pytest.fixture
def cache_on(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")


def _model_and_input(seed=0):
    torch.manual_seed(seed)
    return mlp(), torch.randn(8, 64)


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


def _count_builds(monkeypatch) -> list:
    import tvm

    builds, compile_fn = [], tvm.compile
    monkeypatch.setattr(tvm, "compile", lambda *a, **k: builds.append(1) or compile_fn(*a, **k))
    return builds


def test_minus_one_clears_then_stores(monkeypatch):
    model, x = _model_and_input()
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    tvm_buda.compile_model(model, (x,))
    builds = _count_builds(monkeypatch)
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "-1")
    compiled = tvm_buda.compile_model(model, (x,))
    assert builds == [1], "the entry was not rebuilt"
    assert len(_entries()) == 1
    assert_matches_golden(compiled.run(x), golden(model, x))
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    tvm_buda.compile_model(model, (x,))
    assert builds == [1], "the rebuilt entry is used"


def _member(entry, suffix: str) -> str:
    (name,) = [n for n in member_names(entry) if n.endswith(suffix)]
    return name


@pytest.mark.parametrize("victim", ["host/mlp.so", "host_weights.safetensors", "mlp_0.py", "mlp_0.safetensors",
                                    "mlp_0.device_state.safetensors", "mlp_0.json", "compile_and_runtime_config.json",
                                    "device.json", "the archive"])
def test_corrupted_entry_is_rebuilt_with_a_warning(cache_on, victim):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = _entries()
    if victim == "the archive":
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2])
    else:
        rewrite_member(entry, _member(entry, victim), lambda data: data[: len(data) // 2])  # truncated
    with pytest.warns(RuntimeWarning, match="unusable"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    assert_matches_golden(compiled.run(x), golden(model, x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the rebuilt entry is valid: no warning
        tvm_buda.compile_model(model, (x,), name="mlp")
    assert len(_entries()) == 1


def test_edited_entry_source_is_detected(cache_on):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = _entries()
    edit = lambda data: data.replace(b"pybuda.op.Relu(", b"pybuda.op.Tanh(")  # noqa: E731 - same size
    rewrite_member(entry, _member(entry, "mlp_0.py"), edit)
    with pytest.warns(RuntimeWarning, match="checksum"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    assert_matches_golden(compiled.run(x), golden(model, x))


def test_entry_from_another_version_is_ignored(cache_on, monkeypatch):
    model, x = _model_and_input()
    with monkeypatch.context() as m:   # written as if by other versions
        m.setattr("tvm_buda.images.build.tool_versions", lambda: {"tvm-buda": "9.9", "apache-tvm": "0.99"})
        tvm_buda.compile_model(model, (x,))
    with pytest.warns(RuntimeWarning, match="other tool versions"):
        compiled = tvm_buda.compile_model(model, (x,))
    assert_matches_golden(compiled.run(x), golden(model, x))


def test_no_file_in_the_cache_is_a_pickle(cache_on):
    model, x = _model_and_input()
    tvm_buda.compile_model(model, (x,))
    files = {str(p): p.read_bytes() for p in Path("generated_modules").rglob("*") if p.is_file()}
    (entry,) = _entries()
    files.update({f"{entry}:{name}": data for name, data in members(entry).items()})
    assert len(files) >= 12
    for name, data in files.items():
        assert data[:2] not in PICKLE_MAGIC, f"{name} looks like a pickle"
