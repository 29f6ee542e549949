"""The demo's `mlp` (same seed, same inputs), but the first job to build it writes `started` next
to this file (its worker's pid) and sleeps, so a test can kill that worker mid-job; every later
build (the retried job, the other fidelities) goes straight on. A test fixture, not a feature."""

import os
import time
from pathlib import Path

import torch

from tvm_buda.demo_models import mlp


def build_model():
    marker = Path(__file__).with_name("started")
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        pass
    else:
        os.write(fd, str(os.getppid()).encode())   # the job process's parent: the Dask worker
        os.close(fd)
        time.sleep(120)
    torch.manual_seed(0)
    return mlp(), (torch.randn(8, 64),)
