"""The cached-decoder architectures: a few by default (each compiles two programs, ~30 s), every one the
installed transformers has with --generation-all (or TVM_BUDA_GENERATION=all)."""

import os

from tests.tvm_buda.generation.tiny_lms import available

# distinct attention families, one of each in the default run: grouped-query RoPE with a sliding window,
# ALiBi, multi-query with fused heads read by negative index (Falcon: qkv[..., [-2], :], which TVM's own import
# read as row 0); Llama and GPT-2 run in tests/pybuda/transformers/test_batched_generation.py
DEFAULT_CACHED = ("mistral", "gpt_neox", "falcon")
FALLBACK = ("gpt_neo", "mpt")   # test_cached_decoders.FALLBACK


def every_architecture(config) -> bool:
    return bool(config.getoption("--generation-all", default=False)) or os.environ.get("TVM_BUDA_GENERATION") == "all"


def pytest_generate_tests(metafunc):
    if "cached_arch" in metafunc.fixturenames:
        names = [n for n in available() if n not in FALLBACK]
        metafunc.parametrize("cached_arch", names if every_architecture(metafunc.config) else
                             [n for n in DEFAULT_CACHED if n in names])
