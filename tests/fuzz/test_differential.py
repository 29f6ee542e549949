"""Differential fuzzer: random small PyTorch programs, compiled for the device with CPU fallback
off, must match PyTorch under PyBuda's rule or fail with UnsupportedOpError naming the op.

Programs chain 1-4 steps over ops the op table covers (elementwise, linear, softmax, layernorm,
reductions, transposes, reshapes, slices, concat, attention-style matmul) at shapes that are
mostly not tile multiples. Derandomized, so CI always runs the same programs; more locally with
TVM_BUDA_FUZZ_EXAMPLES=150 (TVM_BUDA_FUZZ_VERBOSE=1 prints each program).
Found so far: torch.amax / torch.amin had no importer converter (fixed in frontends/pytorch.py).
"""

from __future__ import annotations

import collections
import os
import re

import pytest
import torch
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import tvm_buda
from buda_runtime_sim.verify import compare
from tvm_buda.frontends.errors import ModelImportError
from tvm_buda.partition import UnsupportedOpError

pytestmark = pytest.mark.slow

MAX_EXAMPLES = int(os.environ.get("TVM_BUDA_FUZZ_EXAMPLES", "36"))  # CI: 36 programs, about a minute
DIM = st.integers(1, 40)
STATS: collections.Counter = collections.Counter()

UNARY = {
    "relu": torch.relu, "gelu": torch.nn.functional.gelu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "exp": lambda h: torch.exp(torch.clamp(h, -4, 4)), "neg": torch.neg, "abs": torch.abs,
    "sqrt": lambda h: torch.sqrt(torch.abs(h) + 1), "reciprocal": lambda h: torch.reciprocal(torch.abs(h) + 1),
    "log": lambda h: torch.log(torch.abs(h) + 1), "clamp": lambda h: torch.clamp(h, -0.5, 0.5),
    "leaky": lambda h: torch.where(h > 0, h, 0.1 * h), "square": lambda h: h * h,
    "scale_shift": lambda h: h * 0.75 - 0.25,
}
REDUCE = {"sum": torch.sum, "mean": torch.mean, "amax": torch.amax, "amin": torch.amin,
          "max": lambda h, dim, keepdim: torch.max(h, dim, keepdim=keepdim).values}


STEPS = ([("unary", name) for name in sorted(UNARY)] + [("reduce", name) for name in sorted(REDUCE)]
         + [(kind, None) for kind in ("linear", "layernorm", "residual", "softmax", "transpose", "reshape", "slice",
                                      "concat", "attention")])


class Program(torch.nn.Module):
    """Steps applied in order to the running value; each step is (kind, argument)."""

    def __init__(self, steps, widths):
        super().__init__()
        self.steps = steps
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(w_in, w_out) if kind == "linear" else torch.nn.LayerNorm(w_in)
            for (kind, _), (w_in, w_out) in zip(steps, widths) if kind in ("linear", "layernorm"))

    def forward(self, x):
        h, layers = x, iter(self.layers)
        for kind, arg in self.steps:
            if kind in ("linear", "layernorm"):
                h = next(layers)(h)
            elif kind == "unary":
                h = UNARY[arg](h)
            elif kind == "residual":
                h = h + x if h.shape == x.shape else h * 2
            elif kind == "softmax":
                h = torch.softmax(h, dim=-1)
            elif kind == "reduce":
                h = REDUCE[arg](h, -1, keepdim=True)
            elif kind == "transpose":
                h = h.transpose(-1, -2)
            elif kind == "reshape":
                h = h.reshape(h.shape[0], h.shape[2], h.shape[1])
            elif kind == "slice":
                h = h[..., : max(1, h.shape[-1] // 2)]
            elif kind == "concat":
                h = torch.cat([h, h * 0.5], dim=-1)
            elif kind == "attention":
                h = torch.matmul(h, h.transpose(-1, -2)) / h.shape[-1] ** 0.5
        return h


@st.composite
def programs(draw):
    input_shape = [draw(st.integers(1, 2)), draw(DIM), draw(DIM)]
    shape = list(input_shape)
    steps, widths = [], []
    for _ in range(draw(st.integers(1, 4))):
        kind, arg = draw(st.sampled_from(STEPS))
        width_in = shape[-1]
        if kind == "linear":
            shape[-1] = draw(DIM)
        elif kind == "reduce":
            shape[-1] = 1
        elif kind in ("transpose", "reshape"):
            shape[-1], shape[-2] = shape[-2], shape[-1]
        elif kind == "slice":
            shape[-1] = max(1, shape[-1] // 2)
        elif kind == "concat":
            shape[-1] *= 2
        elif kind == "attention":
            shape[-1] = shape[-2]
        steps.append((kind, arg))
        widths.append((width_in, shape[-1]))
    return tuple(input_shape), steps, widths, draw(st.integers(0, 2**16))


def _describe(steps) -> str:
    return " -> ".join(arg or kind for kind, arg in steps)


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
@example(((2, 5, 33), [("reduce", "amax"), ("unary", "gelu")], [(33, 1), (1, 1)], 0))  # found: no amax converter
@example(((1, 7, 45), [("reduce", "amin")], [(45, 1)], 1))
def test_random_programs_match_pytorch(program):
    shape, steps, widths, seed = program
    torch.manual_seed(seed)
    model = Program(steps, widths).eval()
    x = torch.empty(shape).uniform_(-2, 2)
    config = tvm_buda.CompilerConfig()
    config.enable_tvm_cpu_fallback = False  # every op on the device, or a clear error
    what = f"{list(shape)}: {_describe(steps)}"
    STATS["programs"] += 1
    STATS[f"steps={len(steps)}"] += 1
    if os.environ.get("TVM_BUDA_FUZZ_VERBOSE"):
        print(what)
    try:
        out = tvm_buda.compile_model(model, (x,), config=config, name="fuzz").run(x)
    except (UnsupportedOpError, ModelImportError) as exc:
        assert isinstance(exc, UnsupportedOpError) or "unsupported op" in str(exc), f"{what}: {exc}"
        assert re.search(r"[a-z_]+\.[a-z_]+", str(exc)), f"{what}: the error names no op: {exc}"
        STATS["unsupported"] += 1
        event(f"unsupported: {str(exc)[:80]}")
        return
    with torch.no_grad():
        golden = model(x)
    result = compare(out, golden)
    assert result.passed, f"{what}: {result}"
    STATS["matched"] += 1
    event("matched")


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_found_amax_amin_run_on_the_device(reduce):
    """The fuzzer's find: torch.amax/amin failed to import; they are max/min reductions now."""
    torch.manual_seed(0)
    model, x = Program([("reduce", reduce)], [(33, 1)]).eval(), torch.randn(2, 5, 33)
    config = tvm_buda.CompilerConfig()
    config.enable_tvm_cpu_fallback = False
    compiled = tvm_buda.compile_model(model, (x,), config=config, name=reduce)
    assert "max" in compiled.device_ops() or "min" in compiled.device_ops(), compiled.device_ops()
    with torch.no_grad():
        assert compare(compiled.run(x), model(x)).passed


def test_fuzzer_statistics():
    """Runs after the fuzzer (file order): says how many programs ran and how they ended."""
    print(f"differential fuzzer: {dict(STATS)}")
