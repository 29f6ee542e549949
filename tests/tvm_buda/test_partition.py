"""partition_for_buda hands FuseOpsByPattern only the patterns that can match, with the same result."""

import torch
import tvm_ffi

from relay_passes import buda_pass_pipeline
from tvm_buda import partition
from tvm_buda.demo_models import bert_encoder_hidden
from tvm_buda.frontends.dispatch import import_model


def _names(patterns) -> list[str]:
    return [p.name.removeprefix(partition.PATTERN_PREFIX) for p in patterns]


def test_a_composite_needs_every_op_it_names():
    (bias,) = [p for p in partition.device_patterns() if p.name == "buda.matmul_bias"]
    assert partition._required_ops(bias.pattern) == {"relax.matmul", "relax.add"}


def test_patterns_whose_ops_are_absent_are_skipped_and_the_partition_is_unchanged(monkeypatch):
    imported = import_model(bert_encoder_hidden(layers=1), (torch.randn(1, 32, 768),), "bert")
    mod = buda_pass_pipeline(imported.params)(imported.mod)
    used = _names(partition.patterns_for(mod))
    assert {"matmul_bias", "matmul", "nn.softmax", "nn.layer_norm", "nn.gelu"} <= set(used)
    assert "nn.conv2d" not in used and "conv2d_bias" not in used
    assert used == [n for n in _names(partition.device_patterns()) if n in used]  # priority order kept
    narrowed = partition.partition_for_buda(mod)
    monkeypatch.setattr(partition, "patterns_for", lambda _mod: partition.device_patterns())
    assert tvm_ffi.structural_equal(narrowed, partition.partition_for_buda(mod))
