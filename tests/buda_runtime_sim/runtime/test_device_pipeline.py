"""Pipelines of devices (runtime/device_pipeline.py): CPU and TT devices in creation order, each
device's outputs feeding the next, d2d queues receiving what crosses each boundary, and the errors
of badly built pipelines."""

import queue
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import pybuda
from tests.helpers import assert_matches_golden


class TwoOut(torch.nn.Module):
    """Two outputs: the next device must take two inputs."""

    def forward(self, x):
        return torch.relu(x), x * 0.5


class AddPair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)

    def forward(self, a, b):
        return self.lin(a + b)


def _parts(seed=0):
    """CPU -> TT -> CPU -> TT: the CPU parts are PyTorch ops with a torch.nn.GELU (host), the TT parts matmuls."""
    torch.manual_seed(seed)
    return (torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU()).eval(),
            TwoOut(),
            AddPair().eval(),
            torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval())


def _devices(parts):
    cpu0 = pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("pre", parts[0]))
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("split", parts[1]))
    cpu1 = pybuda.CPUDevice("cpu1", module=pybuda.PyTorchModule("join", parts[2]))
    tt1 = pybuda.TTDevice("tt1", module=pybuda.PyTorchModule("head", parts[3]))
    return cpu0, tt0, cpu1, tt1


def _eager(parts, x):
    """The framework's result and every tensor that crosses a device boundary, in PyTorch eager."""
    with torch.no_grad():
        h = parts[0](x)
        pair = parts[1](h)
        j = parts[2](*pair)
        return parts[3](j), [[h], list(pair), [j]]


def _drain(q):
    return [q.get_nowait() for _ in range(q.qsize())]


def test_cpu_tt_cpu_tt_manual_api_matches_pytorch_and_fills_d2d_queues():
    parts = _parts()
    cpu0, tt0, cpu1, tt1 = _devices(parts)
    xs = [torch.randn(4, 16) for _ in range(3)]
    d2d = [queue.Queue() for _ in range(3)]
    out_q = pybuda.initialize_pipeline(training=False, sample_inputs=(xs[0],), d2d_fwd_queues=d2d)
    assert tt0.compiled and tt1.compiled, "initialize_pipeline compiles every TT device"
    assert all(q.empty() for q in d2d), "the compile pass is not a forward"
    for x in xs:
        cpu0.push_to_inputs(x)
    pybuda.run_forward(input_count=2)
    pybuda.run_forward(input_count=1)
    crossings = [_drain(q) for q in d2d]
    for i, x in enumerate(xs):
        expected, boundaries = _eager(parts, x)
        assert_matches_golden(out_q.get_nowait()[0].value(), expected)
        for b, tensors in enumerate(boundaries):
            got = crossings[b][i]
            assert len(got) == len(tensors), f"boundary {b}"
            for g, t in zip(got, tensors):
                assert isinstance(g, pybuda.Tensor)
                assert_matches_golden(g.value(), t, f"boundary {b}, input {i}")
    assert [len(c) for c in crossings] == [3, 3, 3]
    assert out_q.empty()
    # what left a CPU device crosses as computed there: the host part is PyTorch itself
    assert torch.equal(crossings[0][1][0].value(), _eager(parts, xs[1])[1][0][0])


def test_run_inference_runs_the_same_pipeline():
    parts = _parts(seed=1)
    _devices(parts)
    xs = [torch.randn(4, 16) for _ in range(2)]
    out_q = pybuda.run_inference(inputs=[(x,) for x in xs])
    for x in xs:
        assert_matches_golden(out_q.get()[0].value(), _eager(parts, x)[0])


def test_run_inference_from_threads_is_serial_identical():
    _devices(_parts(seed=3))
    xs = [torch.randn(4, 16) for _ in range(8)]

    def infer(x):
        return pybuda.run_inference(inputs=[(x,)]).get()[0].value()

    expected = [infer(x) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(infer, xs))
    assert all(torch.equal(o, e) for o, e in zip(outs, expected))


def test_initialize_pipeline_compiles_for_the_first_queued_input():
    parts = _parts(seed=2)
    cpu0, tt0, _, tt1 = _devices(parts)
    x = torch.randn(4, 16)
    cpu0.push_to_inputs(x)
    out_q = pybuda.initialize_pipeline(training=False)  # no sample_inputs: the queued input is the sample
    assert tt0.compiled and tt1.compiled and len(cpu0.input_queue) == 1
    pybuda.run_forward(input_count=1)
    assert_matches_golden(out_q.get_nowait()[0].value(), _eager(parts, x)[0])
    pybuda.shutdown()
    pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("pre", parts[0]))
    with pytest.raises(ValueError, match="sample_inputs are needed.*or push one input to cpu0 first"):
        pybuda.initialize_pipeline(training=False)


def test_bad_pipelines_give_clear_errors():
    parts = _parts()
    cpu0, tt0, cpu1, tt1 = _devices(parts)
    x = torch.randn(4, 16)
    with pytest.raises(ValueError, match=r"2 d2d_fwd_queues given but the pipeline cpu0 -> tt0 -> cpu1 -> tt1 has 3"):
        pybuda.initialize_pipeline(training=False, sample_inputs=(x,), d2d_fwd_queues=[queue.Queue()] * 2)
    with pytest.raises(ValueError, match=r"4 d2d_bwd_queues given .* has 3"):
        pybuda.initialize_pipeline(training=False, sample_inputs=(x,), d2d_bwd_queues=[queue.Queue()] * 4)
    with pytest.raises(TypeError, match=r"d2d_fwd_queues\[1\] is a list"):
        pybuda.initialize_pipeline(training=False, sample_inputs=(x,), d2d_fwd_queues=[queue.Queue(), [], queue.Queue()])
    with pytest.raises(ValueError, match="microbatch_count must be a positive integer"):
        pybuda.initialize_pipeline(training=False, sample_inputs=(x,), microbatch_count=0)
    with pytest.raises(RuntimeError, match="tt0: push_to_inputs on a device that is not first.*push inputs to cpu0"):
        tt0.push_to_inputs(torch.randn(4, 32))
    assert not tt0.input_queue
    pybuda.shutdown()

    # an idle device in the middle
    torch.manual_seed(0)
    pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("pre", parts[0]))
    pybuda.TTDevice("idle")
    pybuda.CPUDevice("cpu1", module=pybuda.PyTorchModule("post", torch.nn.ReLU()))
    with pytest.raises(RuntimeError, match="device idle has no module but sits between cpu0 and cpu1"):
        pybuda.run_inference(inputs=[(x,)])
    pybuda.shutdown()

    # output and input counts that do not match name both devices and both counts
    pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("split", TwoOut()))
    pybuda.CPUDevice("cpu1", module=pybuda.PyTorchModule("pre", parts[0]))
    with pytest.raises(ValueError, match=r"cpu0 produces 2 output\(s\) but cpu1's first module pre takes 1 input"):
        pybuda.initialize_pipeline(training=False, sample_inputs=(torch.randn(4, 16),))
    pybuda.shutdown()
    pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("pre", parts[0]))
    pybuda.CPUDevice("cpu1", module=pybuda.PyTorchModule("join", AddPair()))
    with pytest.raises(ValueError, match=r"cpu0 produces 1 output\(s\) but cpu1's first module join takes 2 input"):
        pybuda.run_inference(inputs=[(x,)])


def test_training_through_tt_then_cpu_fills_d2d_queues_both_ways():
    """TT (first layer) -> CPU (rest + loss): activations cross forward, their gradients cross back."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    reference = [torch.nn.Linear(16, 32), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(32, 4))]
    reference[0].load_state_dict(model[0].state_dict())
    reference[1][1].load_state_dict(model[2].state_dict())
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("first", model[0]),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    cpu0 = pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("rest", torch.nn.Sequential(model[1], model[2])))
    cpu0.place_loss_module(pybuda.PyTorchModule("loss", torch.nn.MSELoss()))
    xs, ys = [torch.randn(8, 16) for _ in range(2)], [torch.randn(8, 4) for _ in range(2)]
    fwd, bwd = [queue.Queue()], [queue.Queue()]
    pybuda.initialize_pipeline(training=True, sample_inputs=(xs[0],), sample_targets=(ys[0],), microbatch_count=2,
                               d2d_fwd_queues=fwd, d2d_bwd_queues=bwd)
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        cpu0.push_to_target_inputs(y)
    pybuda.run_forward(input_count=2)  # microbatch_count=2: two forwards may wait for their backward
    pybuda.run_backward(input_count=2, zero_grad=True)
    sent, returned = _drain(fwd[0]), _drain(bwd[0])
    assert len(sent) == 2 and len(returned) == 2
    for x, y, s, r in zip(xs, ys, sent, returned):
        h = reference[0](x).detach().requires_grad_(True)
        torch.nn.functional.mse_loss(reference[1](h), y).backward()
        assert_matches_golden(s[0].value(), h.detach(), "activation sent to cpu0")
        assert_matches_golden(r[0].value(), h.grad, "gradient sent back to tt0")
    for x, y in zip(xs + xs[:1], ys + ys[:1]):
        tt0.push_to_inputs(x)
        cpu0.push_to_target_inputs(y)
    pybuda.run_forward(input_count=2)
    with pytest.raises(RuntimeError, match=r"leave 3 forward pass\(es\) waiting for run_backward.*microbatch_count=2"):
        pybuda.run_forward(input_count=1)
    pybuda.run_backward(input_count=2)
    pybuda.run_forward(input_count=1)  # room again once the backward passes ran
    assert fwd[0].qsize() == 3 and bwd[0].qsize() == 2


def test_training_d2d_queue_count_is_checked():
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("first", torch.nn.Linear(16, 4)))
    cpu0 = pybuda.CPUDevice("cpu0")
    cpu0.place_loss_module(pybuda.PyTorchModule("loss", torch.nn.L1Loss()))
    with pytest.raises(ValueError, match=r"2 d2d_bwd_queues given but the pipeline tt0 -> cpu0 has 1"):
        pybuda.initialize_pipeline(training=True, d2d_bwd_queues=[queue.Queue(), queue.Queue()])


def test_docs_example_runs_and_matches_pytorch():
    doc = Path(__file__).resolve().parents[3] / "docs" / "pipelines.md"
    namespace = {}
    for block in re.findall(r"```python\n(.*?)```", doc.read_text(), re.S):
        exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - our own documentation
    x, embed, body, norm, head = (namespace[k] for k in ("x", "embed", "body", "norm", "head"))
    with torch.no_grad():
        steps = [embed(x)]
        steps.append(body(steps[-1]))
        steps.append(norm(steps[-1]))
        expected = head(steps[-1])
    assert_matches_golden(namespace["out"], expected)
    for got, want in zip(namespace["crossed"], steps):
        assert_matches_golden(got, want)


def test_training_through_cpu_tt_cpu_loss_matches_torch_gradients():
    """cpu0 (first layer, PyTorch) -> tt0 (middle) -> cpu1 (the loss alone): gradients flow back over
    both boundaries into d2d_bwd_queues and reach the first CPU device's weights as in torch."""
    torch.manual_seed(0)
    first, middle = torch.nn.Linear(16, 32), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(32, 4))
    reference = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    reference[0].load_state_dict(first.state_dict())
    reference[2].load_state_dict(middle[1].state_dict())
    cpu0 = pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("first", first))
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("middle", middle))
    cpu1 = pybuda.CPUDevice("cpu1")
    cpu1.place_loss_module(pybuda.PyTorchModule("loss", torch.nn.MSELoss()))
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    fwd, bwd = [queue.Queue(), queue.Queue()], [queue.Queue(), queue.Queue()]
    pybuda.initialize_pipeline(training=True, sample_inputs=(x,), sample_targets=(y,), d2d_fwd_queues=fwd,
                               d2d_bwd_queues=bwd)
    cpu0.push_to_inputs(x)
    cpu1.push_to_target_inputs(y)
    pybuda.run_forward(input_count=1)
    pybuda.run_backward(input_count=1, zero_grad=True)

    h1 = reference[0](x)
    h1.retain_grad()
    prediction = reference[2](reference[1](h1))
    prediction.retain_grad()
    torch.nn.functional.mse_loss(prediction, y).backward()
    assert_matches_golden(fwd[0].get_nowait()[0].value(), h1.detach(), "cpu0 -> tt0")
    assert_matches_golden(fwd[1].get_nowait()[0].value(), prediction.detach(), "tt0 -> cpu1")
    assert_matches_golden(bwd[1].get_nowait()[0].value(), prediction.grad, "cpu1 -> tt0: d loss / d prediction")
    assert_matches_golden(bwd[0].get_nowait()[0].value(), h1.grad, "tt0 -> cpu0: d loss / d h1")
    assert_matches_golden(pybuda.get_parameter_gradients(cpu0)["weight"].value(), reference[0].weight.grad)
