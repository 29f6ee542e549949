"""The one place that lists, in order, the graph passes a model goes through before partitioning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import tvm
from tvm import relax

from .guard_take import GuardTakeIndices


@dataclass(frozen=True)
class NamedPass:
    name: str
    make: Callable[[], tvm.transform.Pass]
    why: str


@dataclass
class PassPipeline:
    """An ordered list of named passes; `verify` (optional) runs after each one and may raise."""

    passes: list[NamedPass]

    def __call__(self, mod: tvm.IRModule, verify: Callable[[str, tvm.IRModule], None] | None = None) -> tvm.IRModule:
        for p in self.passes:
            mod = p.make()(mod)
            if verify is not None:
                verify(p.name, mod)
        return mod

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.passes]


def buda_pass_pipeline() -> PassPipeline:
    return PassPipeline(
        [
            NamedPass("canonicalize_bindings", relax.transform.CanonicalizeBindings,
                      "drop trivial re-bindings so patterns see ops back to back"),
            NamedPass("fold_constant", relax.transform.FoldConstant,
                      "compute what depends only on constants at compile time"),
            NamedPass("guard_take_indices", GuardTakeIndices,
                      "out-of-range ids must never reach take's unchecked fast mode"),
            NamedPass("dead_code_elimination", relax.transform.DeadCodeElimination,
                      "remove bindings nothing uses"),
        ]
    )
