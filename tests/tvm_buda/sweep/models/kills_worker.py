"""A model file that SIGKILLs its Dask worker (the job process's parent) every time it is built:
the scheduler gives up after its allowed failures and the sweep records CRASH. A test fixture."""

import os
import signal


def build_model():
    os.kill(os.getppid(), signal.SIGKILL)
