"""onnx's backend test data (pytorch-converted, pytorch-operator, simple, light) on buda.

Default: a fixed subset of cases plain TVM passes; buda must pass each by PyBuda's rule, and the
light CNNs must run >= 90% of their ops on the device. With --conformance-all every case runs and
plain TVM decides: a case it fails is skipped with its reason, one it passes buda must pass
(or be listed in selection.KNOWN_LIMITS with the reason).
"""

import pytest

from .onnx_suite import run_buda, run_plain_tvm
from .selection import judged_on_buda

pytest.importorskip("onnx")
pytestmark = pytest.mark.conformance

LIGHT_CNN_DEVICE_SHARE = 0.9


def test_buda_passes_what_plain_tvm_passes(onnx_case, request):
    result = judged_on_buda(onnx_case, request.config, run_plain_tvm, run_buda)
    if onnx_case.folder == "light":
        assert result.device_share >= LIGHT_CNN_DEVICE_SHARE, f"{onnx_case.id}: {result.device_share:.0%} on the device"
