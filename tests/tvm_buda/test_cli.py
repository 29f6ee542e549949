"""The tvm-buda command line, end to end through subprocesses (--help in-process: it only parses)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tvm_buda.demo_models import mlp

CLI = [sys.executable, "-m", "tvm_buda.cli"]


def _run(*args, cwd):
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    torch.export.save(torch.export.export(model, (x,)), str(root / "mlp.pt2"))
    torch.onnx.export(model, (x,), str(root / "mlp.onnx"), dynamo=True)
    return root


@pytest.mark.parametrize("command", [[], ["demo"], ["compile"], ["run"], ["report"], ["cache"], ["cache", "list"],
                                     ["cache", "info"], ["cache", "clear"]])
def test_every_command_has_help(command, capsys):
    from tvm_buda.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: tvm-buda" in capsys.readouterr().out


def test_compile_prints_the_partition(model_files, tmp_path):
    result = _run("compile", str(model_files / "mlp.pt2"), "--quiet", "--graph", "part", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (source,) = (tmp_path / "generated_modules").glob("mlp_*/mlp_0.py")  # the compile's own folder
    assert "graph breaks: 0" in result.stdout and str(source.relative_to(tmp_path)) in result.stdout
    assert (tmp_path / "part.dot").exists()


def test_run_compares_with_the_framework(model_files, tmp_path):
    result = _run("run", str(model_files / "mlp.onnx"), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "output 0 (8, 32): PASS" in result.stdout


def test_report_writes_json_and_png(model_files, tmp_path):
    result = _run("report", str(model_files / "mlp.pt2"), "--device-config", "gs_e150", "--out", "rep", "--quiet",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "samples/s" in result.stdout
    report = json.loads((tmp_path / "rep/mlp_perf.json").read_text())
    assert report["samples_per_second"] > 0
    pngs = list((tmp_path / "rep").glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_report_over_more_chips_than_the_board_has_is_one_clear_error(model_files, tmp_path):
    result = _run("report", str(model_files / "mlp.pt2"), "--device-config", "wh_n300", "--num-chips", "3",
                  "--quiet", cwd=tmp_path)
    assert result.returncode != 0
    assert "3 chips requested but wh_n300 has 2" in result.stderr.strip().splitlines()[-1]


def test_bad_arguments_give_one_clear_line_and_nonzero_exit(model_files, tmp_path):
    missing = _run("run", "missing.onnx", "--quiet", cwd=tmp_path)
    assert missing.returncode != 0
    assert missing.stderr.strip().splitlines()[-1] == "tvm-buda run: error: missing.onnx: no such model file or directory"
    bad_shape = _run("compile", str(model_files / "mlp.onnx"), "--input-shape", "8xfoo", "--quiet", cwd=tmp_path)
    assert bad_shape.returncode != 0 and "dims must be integers" in bad_shape.stderr
    bad_choice = _run("report", str(model_files / "mlp.onnx"), "--device-config", "gs_e999", cwd=tmp_path)
    assert bad_choice.returncode == 2 and "invalid choice" in bad_choice.stderr


def test_cache_commands(model_files, tmp_path):
    env_run = subprocess.run([*CLI, "compile", str(model_files / "mlp.pt2"), "--quiet"], cwd=tmp_path,
                             capture_output=True, text=True, env={**__import__("os").environ,
                                                                  "PYBUDA_ENABLE_TVM_CACHE": "1"})
    assert env_run.returncode == 0, env_run.stderr
    listed = _run("cache", "list", cwd=tmp_path)
    assert listed.returncode == 0 and "valid" in listed.stdout
    key = listed.stdout.splitlines()[1].split()[0]
    info = _run("cache", "info", key, cwd=tmp_path)
    assert info.returncode == 0 and "all checksums match" in info.stdout
    assert _run("cache", "info", "nosuchkey", cwd=tmp_path).returncode == 1
    cleared = _run("cache", "clear", key, cwd=tmp_path)
    assert cleared.returncode == 0 and "removed 1 cache entry" in cleared.stdout
    assert not (Path(tmp_path) / "generated_modules/tvm_cache" / f"{key}.tti").exists()


def test_demo_runs_one_model(tmp_path):
    result = _run("demo", "--model", "mlp", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mlp" in result.stdout and "PASS" in result.stdout


def test_demo_stderr_is_clean(tmp_path):
    """No native chatter a user cannot act on (TFLite's XNNPACK notice; TVM's fast-take warning is
    covered in tests/relay_passes/test_guard_take.py)."""
    result = _run("demo", "--model", "tflite_cnn", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
