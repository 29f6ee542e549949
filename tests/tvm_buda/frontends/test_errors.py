"""Errors users meet before any model runs: missing optional frameworks, unknown inputs, lazy imports."""

import subprocess
import sys

import numpy as np
import pytest

import tvm_buda
from tvm_buda.frontends.errors import FrameworkNotInstalled, unsupported_ops
from tvm_buda.modules import JaxModule, OnnxModule, TFLiteModule, TFModule


def _hide(monkeypatch, *modules):
    """Simulate an uninstalled framework: importing it raises ImportError."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_missing_tensorflow_names_the_extra(monkeypatch):
    _hide(monkeypatch, "tensorflow")
    with pytest.raises(FrameworkNotInstalled, match=r"TFModule needs TensorFlow.*pip install 'tvm-buda\[tensorflow\]'"):
        tvm_buda.compile_model(TFModule("m", lambda x: x), (np.ones(2, np.float32),))


def test_missing_jax_names_the_extra(monkeypatch):
    _hide(monkeypatch, "jax")
    with pytest.raises(FrameworkNotInstalled, match=r"JaxModule needs JAX.*pip install 'tvm-buda\[jax\]'"):
        tvm_buda.compile_model(JaxModule("m", lambda x: x), (np.ones(2, np.float32),))


def test_jax_without_tensorflow_names_the_jax_extra(monkeypatch):
    pytest.importorskip("jax")
    _hide(monkeypatch, "tensorflow")
    with pytest.raises(FrameworkNotInstalled, match=r"jax2tf and TFLite\).*needs TensorFlow.*tvm-buda\[jax\]"):
        tvm_buda.compile_model(JaxModule("m", lambda x: x), (np.ones(2, np.float32),))


def test_missing_onnx_names_the_extra(monkeypatch, tmp_path):
    _hide(monkeypatch, "onnx")
    (tmp_path / "m.onnx").write_bytes(b"")
    with pytest.raises(FrameworkNotInstalled, match=r"OnnxModule needs ONNX.*pip install 'tvm-buda\[onnx\]'"):
        OnnxModule("m", None, onnx_path=str(tmp_path / "m.onnx"))
    with pytest.raises(FrameworkNotInstalled, match=r"tvm-buda\[onnx\]"):
        tvm_buda.compile_model(str(tmp_path / "m.onnx"), ())


def test_missing_tflite_names_the_extra(monkeypatch, tmp_path):
    _hide(monkeypatch, "tflite")
    (tmp_path / "m.tflite").write_bytes(b"\x1c\x00\x00\x00TFL3" + bytes(32))
    with pytest.raises(FrameworkNotInstalled, match=r"pip install 'tvm-buda\[tflite\]'"):
        tvm_buda.compile_model(TFLiteModule("m", tmp_path / "m.tflite"), ())


def test_unknown_model_types_and_files_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match=r"don't know how to compile a builtins.function.*JaxModule"):
        tvm_buda.compile_model(lambda x: x, (np.ones(2),))
    with pytest.raises(ValueError, match=r"model\.bin: don't know how to compile a '\.bin' file"):
        tvm_buda.compile_model(str(tmp_path / "model.bin"), ())


def test_wrappers_check_what_they_wrap():
    with pytest.raises(TypeError, match="path of a .tflite file"):
        TFLiteModule("m", b"bytes")
    with pytest.raises(TypeError, match="onnx.ModelProto"):
        OnnxModule("m", object())
    with pytest.raises(TypeError, match="tf.Module with __call__"):
        TFModule("m", object())


def test_unsupported_op_names_are_read_from_importer_messages():
    assert unsupported_ops("The following operators are not supported for frontend ONNX: Det, DFT") == ["Det", "DFT"]
    assert unsupported_ops("The following operators are not supported in frontend TFLite: 'FOO', 'BAR'\n") == \
        ["FOO", "BAR"]
    assert unsupported_ops("error: 'tf.Erfc' op is neither a custom op nor a flex op") == ["tf.Erfc"]
    assert unsupported_ops("Unsupported function types ['fft_r2c.default']") == ["fft_r2c.default"]


def test_wrappers_and_frontends_import_no_framework():
    code = ("import sys, tvm_buda, tvm_buda.modules, tvm_buda.frontends.dispatch; "
            "from tvm_buda.modules import TFLiteModule; TFLiteModule('m', 'm.tflite'); "
            "loaded = [m for m in ('tensorflow', 'jax', 'onnx', 'tflite', 'keras') if m in sys.modules]; "
            "assert not loaded, loaded")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
