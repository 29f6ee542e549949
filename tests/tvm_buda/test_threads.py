"""Compiled models and PyBuda-style devices called from several threads at once return exactly
what they return single-threaded (the simulator is deterministic)."""

from concurrent.futures import ThreadPoolExecutor

import torch

import pybuda
import tvm_buda

THREADS = 4
CALLS = 16


def _model(activation, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 96), activation, torch.nn.Linear(96, 48)).eval()


def _inputs():
    torch.manual_seed(1)
    return [torch.randn(8, 64) for _ in range(CALLS)]


def _concurrently(fn, jobs):
    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(fn, jobs))


def test_one_and_two_compiled_models_from_many_threads():
    xs = _inputs()
    first = tvm_buda.compile_model(_model(torch.nn.ReLU(), 0), (xs[0],))
    second = tvm_buda.compile_model(_model(torch.nn.Tanh(), 1), (xs[0],))
    expected = {(m, i): model.run(x) for m, model in enumerate((first, second)) for i, x in enumerate(xs)}

    same = _concurrently(lambda i: first.run(xs[i]), range(CALLS))
    assert all(torch.equal(out, expected[0, i]) for i, out in enumerate(same)), "one model, many threads"

    jobs = [(i % 2, i) for i in range(CALLS)] * 2
    mixed = _concurrently(lambda job: (first, second)[job[0]].run(xs[job[1]]), jobs)
    assert all(torch.equal(out, expected[job]) for job, out in zip(jobs, mixed)), "two models, many threads"


def test_pybuda_run_inference_from_many_threads():
    xs = _inputs()
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", _model(torch.nn.GELU(), 2)))

    def infer(x):
        return pybuda.run_inference(inputs=[(x,)]).get()[0].to_framework("pytorch")

    expected = [infer(x) for x in xs]
    outs = _concurrently(lambda i: infer(xs[i]), range(CALLS))
    assert all(torch.equal(out, exp) for out, exp in zip(outs, expected))
