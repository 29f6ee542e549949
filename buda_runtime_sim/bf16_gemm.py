"""Fidelity products as one bfloat16 GEMM, where every operand slice is a bfloat16 value.

Why: the matrix unit's phase products are sums of products of narrow slices (numerics.md), and
with the default formats (Float16_b activations and weights) every slice fits in bfloat16. On a
CPU with AVX512-BF16 or AMX, oneDNN multiplies bfloat16 matrices several times faster than
float32 ones (a BERT-sized 128x768x3072 GEMM here: 0.73 ms against 3.45 ms), and it computes
exactly what the simulator defines for a Float16_b accumulation: every product of two bfloat16
values is exact in float32, the products are summed in float32, and the sum is rounded to
bfloat16 once, to nearest even (`accumulate(..., Float16_b)`). Several phase terms become one
GEMM over the terms laid side by side along the inner dimension:

    sum_i A_i @ B_i  ==  [A_1 | A_2 | ...] @ [B_1; B_2; ...]

so HiFi3 (A'B' - lo(A) lo(B)) costs one GEMM of twice the depth, not two.

What differs from the float32 route: only the order in which float32 partial sums are added,
which BLAS leaves unspecified anyway (a result rounded to bfloat16 then differs in about 2 of
10,000 elements by one unit in the last place), and denormal products, which oneDNN flushes to
zero as the device does (numerics.md). A float32 accumulation (accumulate_df=Float32) needs the
float32 sum itself, so it keeps the float32 route; so do Float16 ("a" family) accumulations and
operands with slices wider than bfloat16 (Float32 or Float16 values at HiFi2-4).

`TVM_BUDA_BF16_GEMM`: "auto" (default) uses the route where the CPU multiplies bfloat16 natively,
"0" never, "1" always (slow without hardware support: for testing the route anywhere). Convolutions
take it only where oneDNN has bfloat16 convolution kernels (AVX512BW/VL/DQ or AVX-NE-CONVERT): an
AVX2-only CPU has none, so there "1" leaves convolutions on the float32 route. `TVM_BUDA_CPU_BF16=0`
makes this process act as a CPU without bfloat16 instructions (what an AVX2-only machine runs), on
any machine; `route()` names the route a process takes and `bf16_products()` counts what ran.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings

import numpy as np

from .env import BF16_GEMM, CPU_BF16

_LOW_HALF = np.uint32(0xFFFF)
# products run on the bfloat16 route in this process (matmuls and convolutions), for reports
_bf16_runs = 0
_runs_lock = threading.Lock()


def _hardware_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX); TVM_BUDA_CPU_BF16=0: no."""
    return _cpu_setting() != "absent" and _probe_bf16_multiply()


def _hardware_bf16_convolution() -> bool:
    """Whether oneDNN runs bfloat16 convolutions on this CPU at all (AVX512BW/VL/DQ or AVX-NE-CONVERT;
    without them torch refuses); TVM_BUDA_CPU_BF16=0: no."""
    return _cpu_setting() != "absent" and _probe_bf16_convolution()


@functools.cache
def _probe_bf16_multiply() -> bool:
    torch = torch_module()
    cpu = getattr(torch, "cpu", None)
    checks = [getattr(cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return torch.backends.mkldnn.is_available() and any(check is not None and check() for check in checks)


@functools.cache
def _probe_bf16_convolution() -> bool:
    torch = torch_module()
    return torch.backends.mkldnn.is_available() and bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def _cpu_setting() -> str:
    setting = CPU_BF16.get().lower()
    if setting in ("0", "off", "false"):
        return "absent"
    if setting != "auto":
        raise ValueError(f"environment variable {CPU_BF16.name}={setting!r} must be auto or 0: {CPU_BF16.doc}")
    return "auto"


# The route is chosen by the size of the right operand's matrix (inner dim x columns), never by
# the rows or batch, so a batch split over chips (data parallel) takes the same route as the
# whole batch and gives the same bits. Below this size the float32 route is faster: joining the
# terms and converting costs tens of microseconds, and at these sizes oneDNN's bfloat16 GEMM of
# twice the depth takes as long as the two float32 GEMMs (AMD EPYC with AVX512-BF16, one thread,
# HiFi3 fidelity_matmul, float32 vs bfloat16 route, weight cached / not: 128x128x64 81/87 vs
# 94/114 us; 128x128x128 126/138 vs 118/145; 128x64x256 145/154 vs 111/144; 128x256x128
# 219/245 vs 170/219; 512 rows gain from 8,192 elements up, 32 rows lose up to 32,768; earlier
# 128x768x768 1.1 ms vs 3.7 ms).
MIN_MATRIX = 1 << 14
# A batched right operand (attention's keys and values: one GEMM per head) gains from 8,192
# elements: BERT-base's [12,128,64] @ [12,64,128] takes 336 us on the bfloat16 route against
# 455-757 us on the float32 one. Its rank, like its matrix size, is the same for any batch split.
MIN_BATCHED_MATRIX = 1 << 13


def enabled(matrix: int | None = None, batched: bool = False, convolution: bool = False) -> bool:
    """Whether a product whose right operand is a `matrix`-element matrix (inner dim x columns) takes
    the bfloat16 route in this process (TVM_BUDA_BF16_GEMM: "1" always; "auto" where the CPU
    multiplies bfloat16 and the matrix is large enough to gain, `batched` right operands from a
    smaller size; None asks about the route at all). A `convolution` needs oneDNN's bfloat16
    convolution kernels besides."""
    fixed = getattr(_fixed, "mode", None)
    mode = fixed or _mode(BF16_GEMM.get())   # (parsed once per value)
    if convolution and mode != "off" and not _hardware_bf16_convolution():
        return False
    if mode != "auto":
        return mode == "on"
    hardware = _fixed.hardware if fixed is not None else _hardware_bf16()
    return hardware and (matrix is None or matrix >= (MIN_BATCHED_MATRIX if batched else MIN_MATRIX))


def route() -> str:
    """The GEMM route this process takes, in words (benchmarks print it beside their figures)."""
    mode = _mode(BF16_GEMM.get())
    cpu = ("this CPU multiplies bfloat16 natively" if _hardware_bf16() else
           "this CPU has no bfloat16 instructions (AVX512-BF16/AMX)"
           + (", TVM_BUDA_CPU_BF16=0" if _cpu_setting() == "absent" else ""))
    conv = "" if _hardware_bf16_convolution() else "; convolutions float32 (no oneDNN bfloat16 convolution here)"
    if mode == "off":
        return f"float32 GEMMs (TVM_BUDA_BF16_GEMM=0; {cpu})"
    if mode == "on":
        return f"bfloat16 GEMMs wherever exact (TVM_BUDA_BF16_GEMM=1; {cpu}){conv}"
    if _hardware_bf16():
        return f"bfloat16 GEMMs where exact and large enough (TVM_BUDA_BF16_GEMM=auto; {cpu}){conv}"
    return f"float32 GEMMs (TVM_BUDA_BF16_GEMM=auto; {cpu})"


def bf16_products() -> int:
    """How many products (GEMMs and convolutions) this process has run on the bfloat16 route."""
    return _bf16_runs


def summary() -> str:
    """One line for benchmark output: the route rule and how many products took the bfloat16 route."""
    return f"GEMM route: {route()}; {bf16_products()} products ran on the bfloat16 route in this process"


def count_bf16_product() -> None:
    global _bf16_runs
    with _runs_lock:
        _bf16_runs += 1


# The setting while a device program runs (setting_fixed), per thread; None: read it every call.
_fixed = threading.local()


@contextlib.contextmanager
def setting_fixed():
    """Inside the block (one device program) TVM_BUDA_BF16_GEMM and TVM_BUDA_CPU_BF16 are read once,
    at its start: read from the environment on every matmul they cost ~0.5 ms of a small BERT's
    training step (and two environment reads per matmul of a decode step). Outside any block,
    every call reads them (tests and users may change them between calls)."""
    previous = getattr(_fixed, "mode", None), getattr(_fixed, "hardware", None)
    mode = _fixed.mode = _mode(BF16_GEMM.get())
    _fixed.hardware = mode == "auto" and _hardware_bf16()     # (asked only in "auto")
    try:
        yield
    finally:
        _fixed.mode, _fixed.hardware = previous


@functools.lru_cache(maxsize=16)
def _mode(setting: str) -> str:
    """TVM_BUDA_BF16_GEMM's value as "on", "off" or "auto" (every matmul asks: ~6 us unparsed)."""
    setting = setting.lower()
    if setting in ("0", "off", "false"):
        return "off"
    if setting in ("1", "on", "true"):
        return "on"
    if setting != "auto":
        raise ValueError(f"environment variable {BF16_GEMM.name}={setting!r} must be auto, 0 or 1: {BF16_GEMM.doc}")
    return "auto"


def holds_bf16(values: np.ndarray) -> bool:
    """True when every float32 value is a bfloat16 value (its low 16 bits are zero)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)     # any strides: no copy
    return not np.bitwise_and(bits, _LOW_HALF).any()


def side_by_side(parts: list[np.ndarray], axis: int):
    """The float32 `parts` (each holding bfloat16 values) as one bfloat16 torch tensor, joined
    along `axis` (-1: the inner dim of a left operand, -2: of a right one). Exact: each value is
    already a bfloat16 value, so the conversion only drops zero bits."""
    torch = _torch or torch_module()

    if len(parts) == 1:
        return torch_view(parts[0]).to(torch.bfloat16)
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    width = shape[axis]
    joined_shape = list(shape)
    joined_shape[axis] = width * len(parts)
    joined = torch.empty(joined_shape, dtype=torch.bfloat16)
    for i, part in enumerate(parts):
        joined.narrow(axis % len(shape), i * width, width).copy_(torch_view(part))
    return joined


def matmul(left, right) -> np.ndarray:
    """left @ right for bfloat16 torch tensors (numpy broadcasting), summed in float32 and rounded
    to bfloat16 once: float32 values, as `accumulate(..., Float16_b)` returns them."""
    torch = _torch or torch_module()
    if right.ndim == 2 and left.ndim == 2:                           # torch.matmul's own call for 2-D
        out = torch.mm(left, right)
    elif right.ndim == 2 and left.ndim > 2 and left.is_contiguous():   # batch dims only on the left: one GEMM
        out = torch.mm(left.reshape(-1, left.shape[-1]), right).reshape(left.shape[:-1] + (right.shape[-1],))
    else:
        out = torch.matmul(left, right)
    count_bf16_product()
    return out.float().numpy()


def torch_module():
    """torch, imported on first use (the simulator imports without it); an `import torch` in a
    function that runs per op costs ~0.4 us a call."""
    global _torch
    if _torch is None:
        import torch
        _torch = torch
    return _torch


_torch = None
# Whether torch has stopped warning about read-only arrays (it warns once per process,
# TORCH_WARN_ONCE): from then on torch_view needs no warnings.catch_warnings block (~3 us).
_read_only_quiet = False


def torch_view(x: np.ndarray):
    """`x` as a torch tensor sharing its memory (read-only weights and broadcast views included;
    only ever read: torch has no read-only tensors)."""
    global _read_only_quiet
    torch = _torch or torch_module()
    if x.flags.writeable or _read_only_quiet:
        try:
            return torch.from_numpy(x)
        except ValueError:              # negative strides, which torch does not take: copied
            if not any(stride < 0 for stride in x.strides):
                raise
            return torch.from_numpy(np.ascontiguousarray(x))
    x = np.ascontiguousarray(x) if any(stride < 0 for stride in x.strides) else x
    with warnings.catch_warnings(record=True) as caught:     # only read
        warnings.simplefilter("always", UserWarning)
        view = torch.from_numpy(x)
    _read_only_quiet = not caught       # no warning: torch gave it before (here or elsewhere)
    return view
