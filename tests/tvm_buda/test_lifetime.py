"""Nothing outlives its model: dropping the last reference to a CompiledModel (or shutting down the
device that compiled it) frees its device subgraphs, generated modules, weights, weight-split cache
entries and the packed functions the VM calls."""

import gc
import weakref

import numpy as np
import torch
import tvm

import pybuda
import tvm_buda
from buda_runtime_sim.tensor import Tensor


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).eval()


def _arrays(value, found: dict, label: str) -> None:
    """Every numpy array reachable from a weight: its value, device copies, consteval results and
    the slices kernels cache on a device tensor (Tensor._derived)."""
    if isinstance(value, (np.ndarray, torch.Tensor)):  # kernels keep weight slices as either
        found.setdefault(id(value), (label, value))
    elif isinstance(value, Tensor):
        _arrays(value.padded, found, label)
        _arrays(value._derived or {}, found, f"{label} derived")
    elif isinstance(value, dict):
        for k, v in value.items():
            _arrays(v, found, f"{label}[{k}]")
    elif isinstance(value, (tuple, list)):
        for v in value:
            _arrays(v, found, label)


def _watch(compiled) -> tuple[dict, list[str]]:
    """Weak references to everything the model owns (weights and their cached slices included)
    and the symbols the VM calls its subgraphs by."""
    refs = {"compiled model": weakref.ref(compiled), "vm": weakref.ref(compiled.vm)}
    arrays = {}
    for i, (subgraph, graph) in enumerate(compiled.subgraphs):
        refs[f"subgraph {i}"] = weakref.ref(subgraph)
        refs[f"module graph {i}"] = weakref.ref(graph)
        refs[f"generated module {i}"] = weakref.ref(subgraph.module)
        for p in subgraph.module.get_parameters():
            _arrays([p.value(), p._device_copies, p.consteval], arrays, f"weight {p.get_name()}")
    for name in compiled.weight_names:
        _arrays(compiled.imported.params[name], arrays, f"host weight {name}")
    assert any("derived" in label for label, _ in arrays.values()), "the run should have cached weight slices"
    refs.update({f"{label} #{i}": weakref.ref(a) for i, (label, a) in enumerate(arrays.values())})
    return refs, [subgraph.symbol for subgraph, _ in compiled.subgraphs]


def _assert_released(refs, symbols):
    gc.collect()
    alive = [name for name, ref in refs.items() if ref() is not None]
    assert not alive, f"still alive after the model was dropped: {alive}"
    for symbol in symbols:
        assert tvm.get_global_func(symbol, allow_missing=True) is None, f"{symbol} is still a global function"


def test_dropped_compiled_model_is_freed():
    model, x = _mlp(), torch.randn(32, 128)
    compiled = tvm_buda.compile_model(model, (x,))
    compiled.run(x)
    refs, symbols = _watch(compiled)
    assert symbols and len(refs) > 6
    del compiled
    _assert_released(refs, symbols)


def test_shutdown_frees_what_a_device_compiled():
    model, x = _mlp(), torch.randn(32, 128)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    out = pybuda.run_inference(inputs=[(x,)]).get()[0]
    assert np.isfinite(out.to_framework("numpy")).all()
    (compiled,) = tt0.compiled.values()
    refs, symbols = _watch(compiled)
    del compiled
    pybuda.shutdown()
    pybuda.shutdown()  # idempotent
    _assert_released(refs, symbols)  # even though the script still holds tt0
    assert tt0.compiled == {}


def test_plain_tvm_compile_keeps_its_symbols_for_the_callers_vm():
    """`tvm.compile(..., target="buda")` returns before its caller makes a VM: the symbols must stay."""
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((32, 32), "float32"), w: R.Tensor((32, 32), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.matmul(x, w))
                R.output(y)
            return y

    ex = tvm.compile(Mod, target="buda", relax_pipeline="buda")
    vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
    a, b = np.random.rand(32, 32).astype("float32"), np.random.rand(32, 32).astype("float32")
    out = vm["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b)).numpy()
    assert np.abs(out - np.maximum(a @ b, 0)).max() <= 0.1 * np.abs(a @ b).max()
