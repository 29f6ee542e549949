"""`import tvm_buda` must not pull in TensorFlow or JAX (they take seconds and GBs)."""

import subprocess
import sys


def test_import_tvm_buda_does_not_import_tensorflow_or_jax():
    code = "import tvm_buda, sys; assert 'tensorflow' not in sys.modules and 'jax' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
