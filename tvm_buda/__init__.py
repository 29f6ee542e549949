"""tvm-buda: a TVM (Relax) backend for a simulated Tenstorrent-style tile accelerator.

Importing this package registers the "buda" target tag, the "buda" Relax pipeline and the
`relax.ext.buda` codegen. Frameworks (TensorFlow, JAX, ONNX) are imported only when used.
"""

from .version import __version__  # noqa: E402

from buda_runtime_sim import DataFormat, MathFidelity  # noqa: E402
from buda_runtime_sim.config import CompilerConfig  # noqa: E402

from . import target  # noqa: E402,F401  (registration side effects)
from . import images  # noqa: E402,F401  (installs the TT device image hooks)
from . import sweep  # noqa: E402,F401  (tvm_buda.sweep(...): the module is callable; Dask loads only when it runs)
from .build import build  # noqa: E402
from .compiled_model import CompiledModel, set_training_perf  # noqa: E402
from .model_compiler import compile_model  # noqa: E402
from .frontends.errors import FrameworkNotInstalled, MalformedModelFile, ModelImportError  # noqa: E402
from .modules import JaxModule, OnnxModule, PyTorchModule, TFGraphDefModule, TFLiteModule, TFModule  # noqa: E402
from .training.perf import training_perf_report_for  # noqa: E402

set_training_perf(training_perf_report_for)   # CompiledModel.perf_report(training=True) (training builds models)

__all__ = ["CompiledModel", "CompilerConfig", "DataFormat", "FrameworkNotInstalled", "JaxModule", "MalformedModelFile",
           "MathFidelity", "ModelImportError", "OnnxModule", "PyTorchModule", "TFGraphDefModule", "TFLiteModule",
           "TFModule", "build", "compile_model", "sweep", "__version__"]
