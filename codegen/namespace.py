"""Every identifier in generated code comes from one Namespace: legal, readable, unique."""

from __future__ import annotations

import builtins
import keyword
import re

_RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"self", "pybuda", "torch"}


class Namespace:
    def __init__(self, reserved: set[str] | None = None):
        self._used: set[str] = set(_RESERVED) | set(reserved or ())
        self._counts: dict[str, int] = {}

    def create_name(self, hint: str) -> str:
        """A fresh identifier close to `hint` ("l1.weight" -> "l1_weight", clashes get _1, _2, ...)."""
        base = re.sub(r"\W+", "_", hint).strip("_").lower() or "v"
        if base[0].isdigit():
            base = "v_" + base
        name = base
        while name in self._used:
            self._counts[base] = self._counts.get(base, 0) + 1
            name = f"{base}_{self._counts[base]}"
        self._used.add(name)
        return name


def class_name(*parts: str) -> str:
    """CamelCase class name from parts: ("bert_encoder", "0") -> "BertEncoder0"."""
    words = re.split(r"[^0-9A-Za-z]+", "_".join(parts))
    name = "".join(w[:1].upper() + w[1:] for w in words if w)
    return name if name and not name[0].isdigit() else "Module" + name
