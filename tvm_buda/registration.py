"""Registering "buda" with TVM (target.py: the target tag, the Relax pipeline, `relax.ext.buda`)
when TVM's compiler is imported, not before: `import tvm_buda` stays light, and a model loaded
from the compile cache runs on TVM's runtime alone (host_vm.py). Whichever comes first, `import
tvm` or `import tvm_buda`, `tvm.compile(mod, target="buda", relax_pipeline="buda")` then works.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys


def _register() -> None:
    from . import target  # noqa: F401  (registration side effects)


class _AfterTvmImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when `tvm` is about to be imported, wraps its loader so the
    registration runs right after TVM's package has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "tvm":
            return None
        sys.meta_path.remove(self)           # once; and the search below must not find us again
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _register()

        spec.loader.exec_module = exec_module
        return spec


def register_with_tvm() -> None:
    """Register now if TVM is imported already, else as soon as it is."""
    if "tvm" in sys.modules:
        _register()
    elif not any(isinstance(f, _AfterTvmImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTvmImport())
