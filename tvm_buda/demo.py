"""`tvm-buda demo`: compile small built-in models, run them on the simulator, compare with the framework."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from buda_runtime_sim.verify import compare


@dataclass(frozen=True)
class DemoCase:
    name: str
    framework: str
    make: Callable[[], tuple]   # -> (model, sample_inputs, golden_fn)


def _pytorch_cases() -> list[DemoCase]:
    def case(name, build, make_inputs):
        def make():
            import torch

            torch.manual_seed(0)
            model = build()
            inputs = make_inputs(torch)

            def golden():
                with torch.no_grad():
                    out = model(*inputs)
                return getattr(out, "last_hidden_state", out)

            return model, inputs, golden

        return DemoCase(name, "pytorch", make)

    from . import demo_models as m

    return [
        case("mlp", m.mlp, lambda torch: (torch.randn(8, 64),)),
        case("embedding_cumsum", m.embedding_cumsum, lambda torch: (torch.randint(0, 100, (2, 16)),)),
        case("bert_encoder_2l", m.bert_encoder, lambda torch: (torch.randn(1, 128, 768),)),
    ]


def demo_cases() -> list[DemoCase]:
    return _pytorch_cases()


def run_demo(print_fn=print, only: str | None = None) -> bool:
    """Run every demo case; returns True if all of them pass PyBuda's accuracy rule."""
    from .compiled_model import compile_model

    ok = True
    header = f"{'model':<20} {'framework':<10} {'device ops':>10} {'host ops':>8} {'subgraphs':>9} " \
             f"{'compile s':>9} {'run s':>6}  accuracy vs framework"
    print_fn(header)
    print_fn("-" * len(header))
    for case in demo_cases():
        if only and case.name != only:
            continue
        model, inputs, golden = case.make()
        start = time.perf_counter()
        compiled = compile_model(model, inputs, name=case.name)
        compiled_at = time.perf_counter()
        out = compiled.run(*inputs)
        ran_at = time.perf_counter()
        out = out[0] if isinstance(out, tuple) else out
        result = compare(out, golden())
        ok &= result.passed
        print_fn(f"{case.name:<20} {case.framework:<10} {len(compiled.device_ops()):>10} {len(compiled.cpu_ops()):>8} "
                 f"{compiled.num_device_subgraphs:>9} {compiled_at - start:>9.2f} {ran_at - compiled_at:>6.2f}  {result}")
    return ok
