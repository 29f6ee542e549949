"""The host part's Relax VM through TVM's runtime alone (tvm_ffi and libtvm_runtime), so a model
loaded from the compile cache or an image runs without importing TVM's compiler: `import tvm`
loads the compiler library and its Python packages, most of a warm start's own time.

A model built in this process hands over a tvm.runtime.Executable (TVM is imported then); a
loaded one, the module of its exported library. Either becomes a VM the same way TVM's
relax.VirtualMachine makes one on the CPU (vm_load_executable, then vm_initialization with the
pooled allocator).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import tvm_ffi

Tensor = tvm_ffi.core.Tensor      # tvm.runtime.Tensor, once TVM is imported, is a subclass
_KDL_CPU, _POOLED_ALLOCATOR = 1, 2


@functools.cache
def _load_runtime() -> None:
    """libtvm_runtime.so, loaded as `import tvm` loads it (global symbols), unless TVM is in."""
    if "tvm" in sys.modules:
        return
    from tvm_ffi.libinfo import load_lib_ctypes

    spec = importlib.util.find_spec("tvm")     # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("apache-tvm is not installed (tvm-buda runs a model's host part on TVM's runtime)")
    load_lib_ctypes("tvm", "tvm_runtime", "RTLD_GLOBAL",
                    extra_lib_paths=[Path(p) / "lib" for p in spec.submodule_search_locations])


def load_module(path) -> tvm_ffi.Module:
    """A host library exported by TVM (export_library), loaded by the runtime alone."""
    _load_runtime()
    return tvm_ffi.load_module(str(path))


class VirtualMachine:
    """A Relax VM on the CPU: vm["main"] is the model's main function."""

    def __init__(self, runnable):
        self.module = runnable["vm_load_executable"]()
        self.module["vm_initialization"](_KDL_CPU, 0, _POOLED_ALLOCATOR)

    def __getitem__(self, name: str):
        return self.module[name]


def runnable(executable):
    """The runtime module the VM loads. A model wholly on the device has no host kernels, yet TVM's
    VM linker gives its executable an empty C source module, which Executable.jit would compile and
    link with the system C compiler before the VM can load (0.1-0.6 s of a compile, in a
    subprocess); such an executable's VM module is loaded as it is. Other executables go through
    TVM's jit; a loaded library is already a runtime module."""
    tvm = sys.modules.get("tvm")
    if tvm is None or not isinstance(executable, tvm.runtime.Executable):
        return executable          # a loaded library (or already a runtime module)
    module = executable.mod
    if all(m.kind == "c" and not m.inspect_source().strip(" ;\n") for m in module.imports):
        return module
    return executable.jit()


def from_dlpack(array):
    """A tensor sharing a C-contiguous, 64-byte-aligned array's memory (tvm.runtime.from_dlpack's checks).
    A bfloat16 array (ml_dtypes; numpy's DLPack has no bfloat16) is shared as its 16-bit patterns
    and viewed back as bfloat16: a bfloat16 framework weight reaches the VM without a copy."""
    if array.dtype.name == "bfloat16":
        bits = tvm_ffi.from_dlpack(array.view("uint16"), require_alignment=64, require_contiguous=True)
        return bits._create_view(array.shape, "bfloat16")
    return tvm_ffi.from_dlpack(array, require_alignment=64, require_contiguous=True)


def to_numpy(tensor):
    """A numpy view of a CPU tensor's memory; a bfloat16 one as ml_dtypes.bfloat16 over its bytes
    (numpy's from_dlpack refuses bfloat16: "Unsupported dtype in DLTensor")."""
    import numpy as np

    if str(tensor.dtype) == "bfloat16":
        import ml_dtypes

        return np.from_dlpack(tensor._create_view(tuple(tensor.shape), "uint16")).view(ml_dtypes.bfloat16)
    return np.from_dlpack(tensor)


def copied(array):
    """A tensor holding a copy of `array`, for dtypes DLPack cannot carry (needs TVM's Python API)."""
    import tvm

    return tvm.runtime.tensor(array)
