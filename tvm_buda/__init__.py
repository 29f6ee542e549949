"""tvm-buda: a TVM (Relax) backend for a simulated Tenstorrent-style tile accelerator.

Importing this package registers the "buda" target tag, the "buda" Relax pipeline and the
`relax.ext.buda` codegen with TVM, as soon as TVM's compiler is imported (registration.py): a
model loaded from the compile cache runs on TVM's runtime alone. Frameworks (TensorFlow, JAX,
ONNX) are imported only when used.
"""

from .version import __version__  # noqa: E402

from buda_runtime_sim import DataFormat, MathFidelity  # noqa: E402
from buda_runtime_sim.config import CompilerConfig  # noqa: E402

from . import images  # noqa: E402,F401  (installs the TT device image hooks)
from . import sweep  # noqa: E402,F401  (tvm_buda.sweep(...): the module is callable; Dask loads only when it runs)
from .compiled_model import CompiledModel, set_training_perf  # noqa: E402
from .model_compiler import compile_model  # noqa: E402
from .explain_model import explain  # noqa: E402
from .frontends.errors import FrameworkNotInstalled, MalformedModelFile, ModelImportError  # noqa: E402
from .modules import JaxModule, OnnxModule, PyTorchModule, TFGraphDefModule, TFLiteModule, TFModule  # noqa: E402
from .registration import register_with_tvm  # noqa: E402


def _training_perf(*args, **kwargs):
    """CompiledModel.perf_report(training=True): training builds models, so it is imported on use."""
    from .training.perf import training_perf_report_for

    return training_perf_report_for(*args, **kwargs)


def __getattr__(name):
    if name == "build":      # TVM's compiler: imported on first use
        from .builder import build

        return build
    raise AttributeError(f"module 'tvm_buda' has no attribute {name!r}")


set_training_perf(_training_perf)
register_with_tvm()

__all__ = ["CompiledModel", "CompilerConfig", "DataFormat", "FrameworkNotInstalled", "JaxModule", "MalformedModelFile",
           "MathFidelity", "ModelImportError", "OnnxModule", "PyTorchModule", "TFGraphDefModule", "TFLiteModule",
           "TFModule", "build", "compile_model", "explain", "sweep", "__version__"]
