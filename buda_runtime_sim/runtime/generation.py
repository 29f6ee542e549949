"""Autoregressive generation: past-cache buffers the TTDevice holds between steps.

PyBuda keeps a decoder's past keys and values in device DRAM: the compiler links ("loops back")
each past-cache input to the output that carries the step's new keys/values
(`CompilerConfig.loopback_outputs = {"input name": output index}`, or the name/shape heuristic of
`enable_link_past_cache_ios`), the host pushes only the other inputs (token ids, positions, mask)
and `TTDevice.generate(loop_count, write_index, tokens_per_iter, token_id)` /
`pybuda.run_generate(...)` run steps that write the new keys/values into the cache buffers.

Here the device owns one buffer per linked input name (shared by every module placed on it, so a
prefill and a decode program fill the same cache; `set_active_subgraph` picks the program). The
buffers never become framework tensors: each step hands them to the compiled model as they are
and writes only the new slice. The semantics we implement (the API reference leaves them open):

- a step's linked output holds T new positions (its length on the one axis where it differs from
  the cache buffer); `write_index` counts slots of T positions, so the step writes positions
  [write_index * T, (write_index + 1) * T). An output of the buffer's full shape replaces it
  (write_index must then be 0).
- `loop_count` steps each consume one pushed input. With `token_id` >= 0, step i covers tokens
  token_id + i * tokens_per_iter ... and writes slot (token_id + i * tokens_per_iter) // T, so one
  call can run several steps; `tokens_per_iter` must then be T. With token_id = -1 every step
  writes at `write_index`.
"""

from __future__ import annotations

import numpy as np

from ..tensor import _to_numpy
from . import device_pipeline, pipeline_state
from .subgraphs import active_modules

UNSET = -1  # PyBuda's "not given" for tokens_per_iter and token_id
_PAST_NAME_HINTS = ("past", "cache")


# ---- links between past-cache inputs and outputs --------------------------------------------------
def _input_names(compiled) -> list[str]:
    return [s.name for s in compiled.imported.inputs]


def cache_inputs(compiled) -> list[str]:
    """Input names the device feeds from its past-cache buffers, in input order. loopback_outputs
    is a global setting: a model that has none of the inputs it names has no caches, one that has
    some but not all is an error (a misspelt name)."""
    names = _input_names(compiled)
    config = compiled.config
    linked = dict(config.loopback_outputs or {})
    unknown = sorted(set(linked) - set(names))
    if unknown and len(unknown) < len(linked):
        raise ValueError(f"loopback_outputs names input(s) {unknown} that {compiled.name} does not have; "
                         f"its inputs are {names}")
    if not linked and config.enable_link_past_cache_ios:
        return [n for n in names if any(h in n.lower() for h in _PAST_NAME_HINTS)]
    return [n for n in names if n in linked]


def _output_links(compiled, outputs: list[np.ndarray], buffers: dict) -> dict[str, int]:
    """Input name -> output index: loopback_outputs as given, or the heuristic: the past inputs (names
    holding "past" or "cache") take the last outputs in order, each of the cache's rank and
    differing from it on at most one axis."""
    names = cache_inputs(compiled)
    explicit = dict(compiled.config.loopback_outputs or {})
    if explicit:
        for name, index in explicit.items():
            if not 0 <= int(index) < len(outputs):
                raise ValueError(f"loopback_outputs[{name!r}] = {index}, but {compiled.name} has {len(outputs)} outputs")
        return {n: int(explicit[n]) for n in names}
    first = len(outputs) - len(names)  # decoders return their new keys/values last, in cache order
    links = {name: first + k for k, name in enumerate(names)}
    for name, index in links.items():
        shape, out = buffers[name].shape, outputs[index] if index >= 0 else None
        if out is None or out.ndim != len(shape) or sum(a != b for a, b in zip(out.shape, shape)) > 1:
            raise ValueError(f"enable_link_past_cache_ios: output {index} of {compiled.name} does not match past-cache "
                             f"input {name} {shape}; set CompilerConfig.loopback_outputs = {{input name: output index}}")
    return links


# ---- the buffers ---------------------------------------------------------------------------------
class PastCache:
    """Past-cache buffers by input name (a TTDevice holds one set, shared by its programs) and the
    step that feeds them to a compiled program and writes its new entries. `owner` names it in errors."""

    def __init__(self, owner: str):
        self.owner = owner
        self.buffers: dict[str, np.ndarray] = {}

    def bind(self, compiled) -> list[str]:
        """The program's cache inputs, their buffers allocated (zeros) or checked against it."""
        names = cache_inputs(compiled)
        for spec in compiled.imported.inputs:
            if spec.name not in names:
                continue
            shape = tuple(int(d) for d in spec.shape)
            if spec.name not in self.buffers:
                self.buffers[spec.name] = _aligned_zeros(shape, spec.dtype)
            elif self.buffers[spec.name].shape != shape:
                raise ValueError(f"{self.owner}: past cache {spec.name} is {self.buffers[spec.name].shape} but "
                                 f"{compiled.name} was compiled for {shape}; compile every program with one cache length")
        return names

    def step(self, compiled, run, pushed, slot, token_position, tokens_per_iter: int,
             start: int | None = None) -> list[np.ndarray]:
        """run(all inputs) -> outputs of `compiled`; the linked outputs are written into the buffers
        at the step's slot (or from position `start`, when given: a step of T tokens need not start
        at a multiple of T), the others returned."""
        cached = self.bind(compiled)
        names = _input_names(compiled)
        if not cached:
            raise RuntimeError(f"{self.owner}: {compiled.name} (inputs {names}) has no past-cache inputs to generate "
                               f"with (it was compiled with loopback_outputs={dict(compiled.config.loopback_outputs)}); "
                               "set CompilerConfig.loopback_outputs = {input name: output index} (or "
                               "enable_link_past_cache_ios=True) before compiling, or use run_forward")
        if isinstance(pushed, dict):
            values = [self.buffers[n] if n in cached else pushed[n] for n in names]
        else:
            rest = iter(pushed)
            values = [self.buffers[n] if n in cached else next(rest) for n in names]
        outputs = [_to_numpy(o) for o in run(values)]
        links = _output_links(compiled, outputs, self.buffers)
        for name, index in links.items():
            _write(self.owner, name, self.buffers[name], outputs[index], slot, token_position, tokens_per_iter, start)
        linked = set(links.values())
        return [o for i, o in enumerate(outputs) if i not in linked]

    def reset(self) -> None:
        """Zero every buffer (a new sequence); generation does not need it, the mask hides stale slots."""
        for buffer in self.buffers.values():
            buffer[...] = 0


def device_cache(device) -> PastCache:
    return device.__dict__.setdefault("_past_cache", PastCache(device.name))


def past_cache(device) -> dict[str, np.ndarray]:
    """The device's past-cache buffers by input name (the arrays themselves; read, do not keep)."""
    return device_cache(device).buffers


def _aligned_zeros(shape, dtype, align: int = 64) -> np.ndarray:
    """Zeros at a 64-byte aligned address: TVM then takes the buffer as it is (no copy per step)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(size + align, dtype=np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + size].view(dtype).reshape(shape)


def pushed_signature(device):
    """(names, [(shape, dtype)]) a pushed input must match: the active module's compiled inputs
    without those the device feeds from its past cache; None before compilation."""
    modules = active_modules(device)
    compiled = device.compiled.get(id(modules[0])) if modules else None
    if compiled is None:
        return None
    cached = set(cache_inputs(compiled))
    specs = [s for s in compiled.imported.inputs if s.name not in cached]
    return [s.name for s in specs], [(tuple(s.shape), s.dtype) for s in specs]


# ---- running steps ---------------------------------------------------------------------------------
def check_generate_args(device_name: str, loop_count, write_index, tokens_per_iter, token_id) -> None:
    for label, value in (("loop_count", loop_count), ("write_index", write_index),
                         ("tokens_per_iter", tokens_per_iter), ("token_id", token_id)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{device_name}: generate {label} must be an int, got {type(value).__name__}")
    if loop_count <= 0:
        raise ValueError(f"{device_name}: generate loop_count={loop_count}; it counts the steps to run, pass 1 or more")
    if write_index < 0:
        raise ValueError(f"{device_name}: generate write_index={write_index} is negative; it is the cache slot "
                         "(in steps of the tokens one step writes) where the new keys/values go")
    if token_id != UNSET and (token_id < 0 or tokens_per_iter <= 0):
        raise ValueError(f"{device_name}: generate token_id={token_id}, tokens_per_iter={tokens_per_iter}: give a "
                         "token_id >= 0 together with tokens_per_iter > 0 (or leave both at -1)")


def step_slots(loop_count: int, write_index: int, tokens_per_iter: int, token_id: int) -> list:
    """Per step: (write slot or None when derived from the token position, first token position or None)."""
    if token_id == UNSET:
        return [(write_index, None)] * loop_count
    return [(None, token_id + i * tokens_per_iter) for i in range(loop_count)]


def run_step(device, pushed, slot, token_position, tokens_per_iter: int):
    """One generate step of `device`'s active module: pushed inputs + past caches in, the new
    keys/values written to the cache, the other outputs returned."""
    modules = active_modules(device)
    if len(modules) != 1:
        raise RuntimeError(f"{device.name}: generate runs one program but {len(modules)} modules are placed; "
                           "pick one with device.set_active_subgraph(index)")
    module = modules[0]
    compiled = device.compiled.get(id(module))
    if compiled is None:
        raise RuntimeError(f"{device.name}: generate before {module.name} was compiled; call "
                           "pybuda.initialize_pipeline(training=False, sample_inputs=...) with every input, past "
                           "caches included, for each program first")
    return device_cache(device).step(compiled, device.run_modules, pushed, slot, token_position, tokens_per_iter)


def _write(owner, name, buffer, new, slot, token_position, tokens_per_iter, start=None) -> None:
    new = np.asarray(new)
    if new.shape == buffer.shape:
        if (slot or 0) != 0 or (token_position or 0) != 0:
            raise ValueError(f"{owner}: output linked to {name} has the cache's full shape {buffer.shape}; "
                             "it replaces the cache, so write_index/token_id must be 0")
        buffer[...] = new
        return
    axes = [i for i, (a, b) in enumerate(zip(new.shape, buffer.shape)) if a != b]
    if new.ndim != buffer.ndim or len(axes) != 1:
        raise ValueError(f"{owner}: output linked to past cache {name} has shape {new.shape}, which differs "
                         f"from the cache {buffer.shape} on more than one axis")
    axis, step = axes[0], new.shape[axes[0]]
    if token_position is not None:
        if tokens_per_iter != step:
            raise ValueError(f"{owner}: tokens_per_iter={tokens_per_iter}, but each step of this program writes "
                             f"{step} position(s) of {name}; pass tokens_per_iter={step}")
        slot = token_position // step
    where = f"write_index {slot}" if start is None else f"position {start}"
    start, length = slot * step if start is None else start, buffer.shape[axis]
    if start + step > length:
        raise ValueError(f"{owner}: {where} writes positions [{start}, {start + step}) of past cache "
                         f"{name}, which holds {length}; compile with a longer cache or start a new sequence")
    index = [slice(None)] * buffer.ndim
    index[axis] = slice(start, start + step)
    buffer[tuple(index)] = new


# ---- the API: TTDevice.generate and pybuda.run_generate ------------------------------------------
def generate(device, loop_count: int, write_index: int, tokens_per_iter: int = UNSET, token_id: int = UNSET) -> None:
    """`TTDevice.generate`: run `loop_count` steps of this device's active program on its pushed
    inputs; outputs (past-cache outputs excepted) go to initialize_pipeline's output queue."""
    check_generate_args(device.name, loop_count, write_index, tokens_per_iter, token_id)
    output_queue = _output_queue("generate")
    with pipeline_state.lock:
        _check_queued(device, loop_count)
        for slot, position in step_slots(loop_count, write_index, tokens_per_iter, token_id):
            pushed = device.input_queue.popleft()
            if device.keeps_past_cache:
                outputs = run_step(device, pushed, slot, position, tokens_per_iter)
            else:  # a CPUDevice holds no past cache: its generate is a forward (API reference)
                outputs = device.run_modules(pushed)
            output_queue.put(pipeline_state.wrap(outputs))


def run_generate(input_count: int = 1, write_index: int = 0, tokens_per_iter: int = UNSET, token_id: int = UNSET,
                 _sequential: bool = False) -> None:
    """`pybuda.run_generate`: run_forward for generation. Each input passes through the pipeline;
    TTDevices holding past caches run a generate step there, other devices their forward."""
    check_generate_args("run_generate", input_count, write_index, tokens_per_iter, token_id)
    output_queue = _output_queue("run_generate")
    with pipeline_state.lock:
        devices = pipeline_state.stages()
        d2d_queues = pipeline_state.state.get("d2d_fwd_queues") or []
        _check_queued(devices[0], input_count)
        for slot, position in step_slots(input_count, write_index, tokens_per_iter, token_id):
            values = devices[0].input_queue.popleft()
            for i, device in enumerate(devices):
                if device.keeps_past_cache and _holds_past_cache(device):
                    values = run_step(device, values, slot, position, tokens_per_iter)
                else:
                    values = device.run_modules(values)
                if d2d_queues and i < len(devices) - 1:  # what crosses each boundary, as run_forward gives
                    d2d_queues[i].put(device_pipeline.as_tensors(values))
            output_queue.put(pipeline_state.wrap(values))


def _output_queue(what: str):
    if not pipeline_state.state["initialized"]:
        raise RuntimeError(f"{what} before initialize_pipeline; compile each program first with "
                           "pybuda.initialize_pipeline(training=False, sample_inputs=...) (past caches included)")
    return pipeline_state.state["output_queue"]


def _holds_past_cache(device) -> bool:
    modules = active_modules(device)
    compiled = device.compiled.get(id(modules[0])) if len(modules) == 1 else None
    return compiled is not None and bool(cache_inputs(compiled))


def _check_queued(device, count: int) -> None:
    if len(device.input_queue) < count:
        raise RuntimeError(f"{count} generate step(s) requested but {len(device.input_queue)} input(s) are queued on "
                           f"{device.name}; push each step's inputs (without the past caches) with push_to_inputs")
