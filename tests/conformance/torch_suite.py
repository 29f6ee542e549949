"""PyTorch conformance: the `nn` module catalogue PyTorch tests itself with (`module_db`).

Every ModuleInfo whose forward inputs are tensors only, its first two such samples (float32,
eval mode, seeded), run on plain TVM (torch.export -> from_exported_program -> llvm -> VM) and on
buda, against PyTorch eager. Plain TVM is judged with allclose(rtol 1e-4, atol 1e-4); buda by
PyBuda's rule (allclose atol 0.1*max|golden| or PCC >= 0.99), shapes (0-d included) exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .onnx_suite import judge_pybuda
from .results import CaseResult, run_column

SAMPLES_PER_MODULE = 2
TVM_RTOL = TVM_ATOL = 1e-4


@dataclass(frozen=True)
class TorchCase:
    module: str      # ModuleInfo name, e.g. "nn.Conv2d"
    index: int       # which tensor-only sample of that module

    @property
    def id(self) -> str:
        return f"{self.module}[{self.index}]"

    def load(self):
        """(module in eval mode, input tensors, eager outputs as numpy), all seeded."""
        import torch

        info = _module_infos()[self.module]
        sample = _tensor_samples(info)[self.index]
        torch.manual_seed(0)
        c = sample.constructor_input
        module = info.module_cls(*c.args, **c.kwargs).eval()
        args = tuple(sample.forward_input.args) + tuple(sample.forward_input.kwargs.values())
        with torch.no_grad():
            expected = module(*args)
        if any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in module.parameters()):
            raise RuntimeError("lazy module left uninitialised")
        return module, args, [t.numpy() for t in _flatten(expected)]


def cases() -> list[TorchCase]:
    return [TorchCase(name, i) for name, info in _module_infos().items()
            for i in range(min(SAMPLES_PER_MODULE, len(_tensor_samples(info))))]


_INFOS: dict = {}
_SAMPLES: dict = {}


def _module_infos() -> dict:
    if not _INFOS:
        from torch.testing._internal.common_modules import module_db

        for info in module_db:
            if _tensor_samples(info):
                _INFOS[info.name] = info
    return _INFOS


def _tensor_samples(info) -> list:
    """Samples whose forward inputs are all tensors (made once, seeded)."""
    if info.name not in _SAMPLES:
        import torch

        torch.manual_seed(0)
        try:
            samples = info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False,
                                              training=False)
        except Exception:  # noqa: BLE001 - a catalogue entry that cannot make float32 samples is skipped
            samples = []
        _SAMPLES[info.name] = [
            s for s in samples
            if (s.forward_input.args or s.forward_input.kwargs)
            and all(isinstance(a, torch.Tensor) for a in (*s.forward_input.args, *s.forward_input.kwargs.values()))
        ]
    return _SAMPLES[info.name]


def _flatten(value) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value.detach()]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    raise TypeError(f"output of type {type(value).__name__} is not a tensor")


# ---- columns ----------------------------------------------------------------------------------
def run_plain_tvm(case: TorchCase) -> CaseResult:
    def body():
        import torch
        import tvm
        from tvm import relax
        from tvm.relax.frontend.torch import from_exported_program

        module, args, expected = case.load()
        with torch.no_grad():
            program = torch.export.export(module, args)
        mod = from_exported_program(program)
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        result = vm["main"](*[tvm.runtime.tensor(a.numpy()) for a in args])
        outputs = _vm_outputs(result)
        if len(outputs) != len(expected):
            raise AssertionError(f"{len(outputs)} outputs, expected {len(expected)}")
        for out, ref in zip(outputs, expected):
            np.testing.assert_allclose(out, ref, rtol=TVM_RTOL, atol=TVM_ATOL)

    return run_column("tvm", body)


def run_buda(case: TorchCase) -> CaseResult:
    share = {}

    def body():
        import torch
        import tvm_buda

        module, args, expected = case.load()
        compiled = tvm_buda.compile_model(module, args, name=case.module.replace("nn.", "").lower())
        share["value"] = compiled.partition_summary().device_fraction
        outputs = compiled.run(*args)
        outputs = [o.numpy() if isinstance(o, torch.Tensor) else np.asarray(o) for o in _flatten_any(outputs)]
        judge_pybuda(expected, outputs)

    result = run_column("buda", body)
    return result.with_share(share.get("value"))


def _flatten_any(value) -> list:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten_any(v)]
    return [value]


def _vm_outputs(result) -> list:
    import tvm

    if isinstance(result, tvm.runtime.Tensor):
        return [result.numpy()]
    return [a for r in result for a in _vm_outputs(r)]


COLUMNS = {"tvm": run_plain_tvm, "buda": run_buda}
