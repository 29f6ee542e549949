"""One column's verdict on one conformance case, and the suite table built from them."""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class CaseResult:
    column: str
    passed: bool
    reason: str = ""                  # first line of the failure ("" when it passed)
    seconds: float = 0.0
    device_share: float | None = None  # buda only: share of ops on the device

    def with_share(self, share: float | None) -> "CaseResult":
        return replace(self, device_share=share)

    def to_dict(self) -> dict:
        return asdict(self)


def run_column(column: str, body) -> CaseResult:
    """Run one column on one case; any exception is a failure with its one-line reason."""
    start = time.perf_counter()
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - every failure is a result, the suite goes on
        return CaseResult(column, False, short_reason(exc), time.perf_counter() - start)
    return CaseResult(column, True, "", time.perf_counter() - start)


def short_reason(exc: BaseException) -> str:
    """`Type: first meaningful line`, TVM's long C++ traces cut to their message."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:  # TVM errors put the message after the stack
        if "Check failed" in ln or ln.startswith(("InternalError", "TVMError", "ValueError", "TypeError")):
            return f"{type(exc).__name__}: {ln[:300]}"
    first = lines[-1] if lines and "Traceback" in lines[0] else (lines[0] if lines else "")
    if not first:
        first = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return f"{type(exc).__name__}: {first[:300]}"
