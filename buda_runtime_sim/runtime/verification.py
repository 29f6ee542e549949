"""PyBuda's verification helpers: VerifyConfig, and verify_module, which runs a module on the
simulated device and checks every output against the module run in its own framework.

The check is PyBuda's rule (buda_runtime_sim.verify): allclose with atol = relative_atol *
max|golden| (or an absolute `atol`), or PCC >= `pcc`. Field names are PyBuda's; fields about
backend stages (verify_post_placer, run_net2pipe, ...) are accepted and have no stage to check here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ..dataformat import DataFormat
from ..enums import BackendDevice, BackendType, DeviceMode
from ..verify import Comparison, compare
from . import devices, pipeline


class TestKind(Enum):
    INFERENCE = 1
    TRAINING = 2
    TRAINING_RECOMPUTE = 3

    __test__ = False  # not a pytest class

    def is_training(self) -> bool:
        return self in (TestKind.TRAINING, TestKind.TRAINING_RECOMPUTE)

    def is_recompute(self) -> bool:
        return self is TestKind.TRAINING_RECOMPUTE

    @classmethod
    def get(cls, training: bool, recompute: bool = False) -> "TestKind":
        if not training:
            return cls.INFERENCE
        return cls.TRAINING_RECOMPUTE if recompute else cls.TRAINING


class VerificationError(AssertionError):
    """A device output differs from the framework's beyond PyBuda's tolerance."""


@dataclass
class VerifyConfig:
    graph_name: str = "graph"
    enabled: bool = True
    intermediates: bool = True
    rtol: object = field(default_factory=dict)     # accepted; PyBuda's rule uses atol and PCC
    atol: object = field(default_factory=dict)     # a number: absolute atol instead of relative_atol
    relative_atol: float = 0.1
    pcc: float | None = None                       # None: 0.99
    dump_tensors_path: str = ""
    run_golden: bool = False
    run_net2pipe: bool = False
    golden_ignore_df_precision: bool = True
    chip_ids: list | None = None
    num_chips: int | None = None
    verify_each_buda_pass: bool = False
    golden_compare_callback: object = None         # callable(golden, output) -> bool, checked too
    verify_tvm_compile: bool = False
    verify_pipeline_result_vs_framework: bool = False
    verify_pybuda_codegen_vs_framework: bool = False
    verify_all: bool = False
    verify_last: bool = True
    verify_post_autograd_passes: bool = False
    verify_post_placer: bool = False
    waive_gradient_errors: set = field(default_factory=set)
    sequential: bool = True
    test_kind: TestKind = TestKind.INFERENCE
    devtype: BackendType = BackendType.Golden
    devmode: DeviceMode = DeviceMode.CompileAndRun
    arch: BackendDevice = BackendDevice.Grayskull
    scale_loss: float = 50.0
    optimizer: dict | None = None
    scheduler: dict | None = None
    epochs: int = 1
    steps: int = 1
    accumulation_steps: int = 1
    microbatch_count: int = 1
    epoch_breaks: list = field(default_factory=list)
    fp32_fallback: DataFormat = DataFormat.Float16_b
    skip_shutdown: bool = False
    tti_path: str | None = None

    def __post_init__(self):
        if self.pcc is None:
            self.pcc = 0.99

    @classmethod
    def disabled(cls) -> "VerifyConfig":
        return cls(enabled=False, verify_last=False, intermediates=False)

    def total_number_of_inputs(self) -> int:
        return self.epochs * self.steps * self.accumulation_steps * self.microbatch_count

    def absolute_atol(self) -> float | None:
        if isinstance(self.atol, (int, float)):
            return float(self.atol)
        values = [v for v in dict(self.atol).values() if v is not None]
        return float(values[0]) if values else None

    def compare(self, output, golden) -> Comparison:
        return compare(output, golden, pcc_threshold=self.pcc, atol_fraction=self.relative_atol,
                       atol=self.absolute_atol())


def verify_outputs(outputs, goldens, verify_cfg: VerifyConfig | None = None, name: str = "module") -> list[Comparison]:
    """Compare device outputs with framework goldens; raise VerificationError naming the first that fails."""
    cfg = verify_cfg or VerifyConfig()
    outputs, goldens = list(outputs), _flat(goldens)
    if len(outputs) != len(goldens):
        raise VerificationError(f"{name}: the device returned {len(outputs)} outputs, the framework {len(goldens)}")
    results = []
    for i, (out, gold) in enumerate(zip(outputs, goldens)):
        out = out.value() if hasattr(out, "value") and callable(out.value) else out
        result = cfg.compare(out, gold)
        if cfg.golden_compare_callback is not None and not cfg.golden_compare_callback(gold, out):
            result = Comparison(False, result.pcc, result.max_abs_error, result.atol)
        if not result.passed:
            raise VerificationError(f"{name}: output {i} does not match the framework: {result}")
        results.append(result)
    return results


def verify_module(module, input_shapes, verify_cfg: VerifyConfig | None = None, input_params=(), device_type=None,
                  inputs=None, input_dtypes=None, **ignored) -> list:
    """Run `module` on a fresh simulated TTDevice and check it against its framework (PyBuda's rule).

    `inputs` (a tuple of tensors) is used when given, else random inputs of `input_shapes` (uniform in
    [0, 1), float32 unless `input_dtypes` says otherwise). Returns the device outputs (pybuda Tensors).
    """
    import torch

    cfg = verify_cfg or VerifyConfig()
    if inputs is None:
        dtypes = list(input_dtypes or [torch.float32] * len(input_shapes))
        inputs = tuple(torch.rand(*shape).to(dtype) for shape, dtype in zip(input_shapes, dtypes))
    inputs = tuple(inputs)
    if not hasattr(module, "cpu_eval"):
        raise TypeError(f"verify_module: {type(module).__name__} has no framework to compare with; "
                        "pass a PyTorchModule (or another framework module)")
    pipeline.shutdown()
    devices.TTDevice("tt0", arch=cfg.arch, devtype=cfg.devtype, fp32_fallback=cfg.fp32_fallback, module=module)
    try:
        outputs = pipeline.run_inference(inputs=[inputs]).get()
    finally:
        if not cfg.skip_shutdown:
            pipeline.shutdown()
    if cfg.enabled and cfg.verify_last:
        verify_outputs(outputs, module.cpu_eval(*inputs), cfg, module.name)
    return outputs


def _flat(values) -> list:
    """Framework outputs -> a flat list of arrays (tuples, lists, dicts and HF ModelOutputs). A
    transformers key/value cache (a config's default use_cache=True) is no output of an inference
    import (frontends/pytorch.py traces without it), so it is not compared."""
    if type(values).__module__.startswith("transformers.cache_utils"):
        return []
    if hasattr(values, "to_tuple"):
        values = values.to_tuple()
    if isinstance(values, dict):
        values = list(values.values())
    if isinstance(values, (tuple, list)):
        return [leaf for v in values for leaf in _flat(v)]
    return [values.detach().numpy() if hasattr(values, "detach") else np.asarray(values)]
