"""PyTorch's nn module catalogue (module_db, tensor-only forward inputs) on buda vs eager.

Default: a fixed subset that plain TVM passes (losses and scalar activations with 0-d results among
them; the lowered 3-D/pad/norm cases must run wholly on the device); --conformance-all runs every
sample, skipping those plain TVM fails.
"""

import pytest

from .selection import ALL_ON_DEVICE_TORCH, judged_on_buda
from .torch_suite import run_buda, run_plain_tvm

pytest.importorskip("expecttest", reason="torch.testing._internal needs expecttest (the test extra)")
pytestmark = pytest.mark.conformance


def test_buda_matches_eager_where_plain_tvm_does(torch_case, request):
    result = judged_on_buda(torch_case, request.config, run_plain_tvm, run_buda)
    if torch_case.id in ALL_ON_DEVICE_TORCH:
        assert result.device_share == 1.0, f"{torch_case.id}: {result.device_share:.0%} on the device"
