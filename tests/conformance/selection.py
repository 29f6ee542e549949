"""Which conformance cases run by default, and which buda failures are known (with their reason).

The default run is a fixed subset, chosen to cover every cause fixed so far within the CI budget
(~4 minutes on 2 cores): initializers listed as graph inputs (Linear, Conv, BatchNorm, PReLU,
Embedding), the fused pattern read twice (addmm), NaN goldens, sequence models, 0-d losses and
scalar activations, one light CNN, and the 3-D, padding, norm and adaptive-pool lowerings (which
must run wholly on the device). `--conformance-all` (or TVM_BUDA_CONFORMANCE=all) runs every
case, with plain TVM as the judge of what buda must pass.
"""

from __future__ import annotations

import os

ENV = "TVM_BUDA_CONFORMANCE"

# Each of these passes on plain TVM (measured); buda must pass it too.
DEFAULT_ONNX = (
    "pytorch-converted/test_Linear",
    "pytorch-converted/test_Conv1d",
    "pytorch-converted/test_Conv2d_depthwise",
    "pytorch-converted/test_Conv3d",
    "pytorch-converted/test_ConvTranspose2d",
    "pytorch-converted/test_BatchNorm2d_eval",
    "pytorch-converted/test_PReLU_2d",
    "pytorch-converted/test_Embedding",
    "pytorch-converted/test_MaxPool1d",
    "pytorch-converted/test_AvgPool3d",
    "pytorch-operator/test_operator_addmm",
    "pytorch-operator/test_operator_sqrt",
    "simple/test_sequence_model1",
    "simple/test_single_relu_model",
    "light/light_bvlc_alexnet",
)
DEFAULT_TORCH = (
    "nn.MSELoss[0]",
    "nn.CrossEntropyLoss[0]",
    "nn.NLLLoss[0]",
    "nn.KLDivLoss[0]",
    "nn.ReLU[0]",
    "nn.Tanh[1]",
    "nn.Conv1d[0]",
    "nn.Conv2d[0]",
    "nn.BatchNorm2d[0]",
    "nn.LayerNorm[0]",
    "nn.MaxPool3d[0]",
    "nn.Embedding[0]",
    "nn.Conv3d[0]",
    "nn.ReflectionPad2d[0]",
    "nn.GroupNorm[0]",
    "nn.AdaptiveAvgPool2d[0]",
)

# Cases lowered to device ops (3-D as 2-D, pads as pads/slices, norms as reductions): buda must run
# every op of them on the device, not just get the numbers right.
ALL_ON_DEVICE_TORCH = ("nn.MaxPool3d[0]", "nn.Conv3d[0]", "nn.ReflectionPad2d[0]", "nn.GroupNorm[0]",
                       "nn.AdaptiveAvgPool2d[0]")

# Cases plain TVM passes and buda does not yet, with the reason (docs/known_limits.md lists them).
KNOWN_LIMITS: dict[str, str] = {}


def run_all(config=None) -> bool:
    """True for the full sets: `--conformance-all` or TVM_BUDA_CONFORMANCE=all."""
    if os.environ.get(ENV, "").lower() == "all":
        return True
    return bool(config is not None and config.getoption("--conformance-all", default=False))


def chosen(all_ids: list[str], default: tuple[str, ...], everything: bool) -> list[str]:
    if everything:
        return list(all_ids)
    missing = sorted(set(default) - set(all_ids))
    if missing:
        raise LookupError(f"default conformance cases not found in the installed suites: {missing}")
    return [i for i in all_ids if i in default]


def judged_on_buda(case, config, run_plain_tvm, run_buda):
    """A case's buda result, judged as both suites judge it: with the full sets, a case plain TVM
    fails too is skipped; a known limit is an expected failure (its reason from KNOWN_LIMITS);
    otherwise buda must pass. Returns the result for the suite's own device-share check."""
    import pytest

    if run_all(config):
        tvm = run_plain_tvm(case)
        if not tvm.passed:
            pytest.skip(f"plain TVM fails too: {tvm.reason}")
    if case.id in KNOWN_LIMITS:
        pytest.xfail(KNOWN_LIMITS[case.id])
    result = run_buda(case)
    assert result.passed, f"{case.id}: {result.reason}"
    return result
