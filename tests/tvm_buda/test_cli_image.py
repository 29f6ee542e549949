"""`tvm-buda image save | info | run` (in-process through cli.main: the commands are thin)."""

import numpy as np
import pytest

from tvm_buda.cli import main

onnx = pytest.importorskip("onnx")


@pytest.fixture
def onnx_file(tmp_path):
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
                              [numpy_helper.from_array(w, "w")])
    path = tmp_path / "matmul.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), str(path))
    return path


@pytest.mark.parametrize("command", [["image"], ["image", "save"], ["image", "info"], ["image", "run"]])
def test_image_commands_have_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0 and "usage: tvm-buda image" in capsys.readouterr().out


def test_save_info_run(onnx_file, tmp_path, capsys):
    image = tmp_path / "x.tti"
    assert main(["image", "save", str(onnx_file), "--device-config", "wh_n150", "-o", str(image), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"written: {image}" in out and "- grid size: [9, 8]" in out and "- harvested rows: 2048" in out
    assert main(["image", "info", str(image)]) == 0
    out = capsys.readouterr().out
    assert "all checksums match" in out and "- matmul (onnx, parameters plain): inputs x (2, 32) float32" in out
    assert "Displaying memory footprint per DRAM channel (MB):\n0 : 0.00" in out   # 32x16 bf16 weights: 1 KiB
    assert main(["image", "run", str(image)]) == 0
    out = capsys.readouterr().out
    assert "output 0 (2, 16) float32" in out and "time to first output" in out


def test_a_damaged_image_is_one_clear_error(onnx_file, tmp_path, capsys):
    (tmp_path / "bad.tti").write_bytes(b"PK\x03\x04 not really")
    assert main(["image", "info", str(tmp_path / "bad.tti")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tvm-buda image: error:") and "not a TTI image" in err and len(err.splitlines()) == 1
