"""Registering "buda" with TVM (target.py: the target tag, the Relax pipeline, `relax.ext.buda`)
when TVM's compiler is imported, not before: `import tvm_buda` stays light, and a model loaded
from the compile cache runs on TVM's runtime alone (host_vm.py). Whichever comes first, `import
tvm` or `import tvm_buda`, `tvm.compile(mod, target="buda", relax_pipeline="buda")` then works.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys


TARGET_TAG = "buda"
PIPELINE_NAME = "buda"


def _buda_pipeline(**kwargs):
    """The pipeline's factory, importing the compiler side (target.py) only when a build asks for it:
    the registration itself must import nothing of ours, since it can run while one of our packages
    is half-imported (`import relay_passes` first imports tvm, which calls `_register`)."""
    from .target import buda_pipeline

    return buda_pipeline(**kwargs)


def _register() -> None:
    import tvm
    from tvm import relax

    tvm.target.tag.register_tag(TARGET_TAG, {"kind": "llvm", "keys": ["cpu"]}, override=True)
    if PIPELINE_NAME not in relax.pipeline.PIPELINE_MAP:
        relax.register_pipeline(PIPELINE_NAME)(_buda_pipeline)


class _AfterTvmImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when `tvm` is about to be imported, wraps its loader so the
    registration runs right after TVM's package has run. It stays on `sys.meta_path` until then:
    a bare `importlib.util.find_spec("tvm")` (an availability check) also reaches it, and the spec
    that call gets is thrown away."""

    _searching = False

    def find_spec(self, name, path=None, target=None):
        if name != "tvm" or self._searching:
            return None
        self._searching = True               # the search below must not find us again
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._searching = False
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            _register()

        spec.loader.exec_module = exec_module
        return spec


def register_with_tvm() -> None:
    """Register now if TVM is imported already, else as soon as it is."""
    if "tvm" in sys.modules:
        _register()
    elif not any(isinstance(f, _AfterTvmImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTvmImport())
