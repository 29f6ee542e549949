"""Every environment variable tvm-buda reads, in one documented registry (README lists them)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str
    doc: str

    def get(self) -> str:
        return os.environ.get(self.name, self.default).strip()

    def get_int(self) -> int:
        value = self.get()
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"environment variable {self.name}={value!r} must be an integer: {self.doc}") from None


ENABLE_TVM_CACHE = EnvVar(
    "PYBUDA_ENABLE_TVM_CACHE", "0",
    "1: reuse and store compiled models in the TVM cache; 0: off; -1: clear this model's entry, then store it",
)
RELOAD_GENERATED_MODULES = EnvVar(
    "PYBUDA_RELOAD_GENERATED_MODULES", "0",
    "1: skip TVM and re-import the existing generated modules (hand edits take effect); "
    "needs an earlier compile with PYBUDA_ENABLE_TVM_CACHE=1",
)

AMP_LIGHT = EnvVar(
    "PYBUDA_AMP_LIGHT", "0",
    "1: matmul weights and biases in Bfp8, matmul fidelity HiFi2; 2 and 3: Bfp4 and LoFi "
    "(CompilerConfig.enable_amp_light(level) when unset)",
)
AMP_LEVEL = EnvVar(
    "PYBUDA_AMP_LEVEL", "",
    "same as set_configuration_options(amp_level=N): 1 = layernorm/softmax in bfloat16, the rest Bfp8_b, "
    "matmul HiFi2; 2 = the same in a formats (Float16, Bfp8); 3 = accepted, no preset",
)

BF16_GEMM = EnvVar(
    "TVM_BUDA_BF16_GEMM", "auto",
    "auto: matmuls and convolutions whose operand slices all fit bfloat16 and whose accumulation is "
    "Float16_b run as bfloat16 GEMMs where the CPU multiplies bfloat16 natively (same results, faster); "
    "0: always float32; 1: always bfloat16 where exact (buda_runtime_sim/bf16_gemm.py); a device program "
    "reads it when it starts",
)

SLICE_CACHE_MB = EnvVar(
    "TVM_BUDA_SLICE_CACHE_MB", "256",
    "megabytes the fidelity slices of large weights (held as their device bytes) may keep between calls, "
    "process-wide; past it they are cut again on each call (buda_runtime_sim/derived_budget.py)",
)

CPU_BF16 = EnvVar(
    "TVM_BUDA_CPU_BF16", "auto",
    "auto: ask the CPU whether it has bfloat16 instructions (AVX512-BF16/AMX for TVM_BUDA_BF16_GEMM=auto, "
    "oneDNN's bfloat16 convolutions); 0: act as a CPU without them, as an AVX2-only machine runs "
    "(for testing what such a machine computes)",
)

TTI_BACKEND_FORMAT = EnvVar(
    "PYBUDA_TTI_BACKEND_FORMAT", "0",
    "1: compile_to_image stores parameters in the device's byte layout (the simulator's one layout: tiles)",
)
TTI_BACKEND_TILIZED_FORMAT = EnvVar(
    "PYBUDA_TTI_BACKEND_TILIZED_FORMAT", "0",
    "1: compile_to_image stores parameters as 32x32 device tiles in each one's data format",
)

N300_DATA_PARALLEL = EnvVar(
    "PYBUDA_N300_DATA_PARALLEL", "0",
    "1: a TTDevice on a two-chip board (wh_n300) splits each batch along dim 0 over both chips and "
    "returns one output per chip, output by output (runtime/chips.py, docs/scaling.md)",
)

CHECK_FINITE = EnvVar(
    "PYBUDA_CHECK_FINITE", "",
    "error (or 1): a device program whose outputs hold inf/NaN from finite inputs, where the same program "
    "in float32 gives finite values, raises NonFiniteResultError naming the first op that made them; "
    "warn: a RuntimeWarning instead; off (or 0): no check. Unset: CompilerConfig.check_finite (default error); "
    "docs/known_limits.md",
)

DEVICE_CONFIG = EnvVar(
    "PYBUDA_DEVICE_CONFIG", "wh_n150",
    "the board the simulator acts as when set_configuration_options(device_config=...) is not given: "
    "wh_n150 (default: one Wormhole n150), wh_n300 (two Wormhole chips), gs_e150, gs_e75 (Grayskull); "
    "detect_available_devices() and a TTDevice without arch= answer its chips",
)
REPORTIFY = EnvVar("PYBUDA_REPORTIFY", "0", "1: write a Reportify web report of every compile (docs/tools.md)")
REPORTIFY_DIR = EnvVar("PYBUDA_REPORTIFY_DIR", "reportify", "folder the Reportify web report is written to")

REGISTRY = (ENABLE_TVM_CACHE, RELOAD_GENERATED_MODULES, AMP_LIGHT, AMP_LEVEL, SLICE_CACHE_MB, CHECK_FINITE,
            DEVICE_CONFIG, REPORTIFY, REPORTIFY_DIR, TTI_BACKEND_FORMAT, TTI_BACKEND_TILIZED_FORMAT, N300_DATA_PARALLEL)


def describe() -> str:
    return "\n".join(f"{v.name} (default {v.default}): {v.doc}" for v in REGISTRY)
