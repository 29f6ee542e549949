"""TTDevice.generate / pybuda.run_generate: past caches held by the device, write_index and
token_id semantics, active subgraphs, and the errors of bad calls."""

import queue as queues

import numpy as np
import pytest
import torch

import pybuda


class AddToCache(torch.nn.Module):
    """forward(x [1, 2, T, 32], past [1, 2, 8, 32]) -> (x + sum over past positions, new = 2 * x)."""

    def forward(self, x, past):
        return x + past.sum(dim=2, keepdim=True), x * 2.0


def _device(step_lens=(1,), link=True):
    if link:
        pybuda.config._get_global_compiler_config().loopback_outputs = {"past": 1}
    modules = [pybuda.PyTorchModule(f"step{t}", AddToCache()) for t in step_lens]
    tt0 = pybuda.TTDevice("tt0", module=modules)
    queue = None
    for i, t in enumerate(step_lens):
        tt0.set_active_subgraph(i)
        queue = pybuda.initialize_pipeline(training=False, sample_inputs=(torch.zeros(1, 2, t, 32),
                                                                          torch.zeros(1, 2, 8, 32)))
    return tt0, queue


def _cache(tt0):
    from buda_runtime_sim.runtime.generation import past_cache

    return past_cache(tt0)["past"]


def test_generate_writes_new_values_at_write_index_and_feeds_the_cache_back():
    tt0, queue = _device()
    x = torch.full((1, 2, 1, 32), 0.5)
    tt0.push_to_inputs((x,))                       # the past cache is not pushed: the device holds it
    tt0.generate(loop_count=1, write_index=3)
    out = queue.get()
    assert len(out) == 1                           # the linked output stays on the device
    np.testing.assert_allclose(out[0].to_framework("numpy"), 0.5)
    cache = _cache(tt0)
    assert np.all(cache[:, :, 3] == 1.0) and np.count_nonzero(cache) == 2 * 32
    tt0.push_to_inputs((x,))
    tt0.generate(loop_count=1, write_index=5)
    np.testing.assert_allclose(queue.get()[0].to_framework("numpy"), 1.5)   # 0.5 + the cached 1.0
    assert np.all(_cache(tt0)[:, :, 5] == 1.0)


def test_token_id_advances_the_write_slot_per_step():
    tt0, queue = _device()
    for v in (1.0, 2.0, 3.0):
        tt0.push_to_inputs((torch.full((1, 2, 1, 32), v),))
    pybuda.run_generate(input_count=3, write_index=2, tokens_per_iter=1, token_id=2)
    np.testing.assert_allclose(_cache(tt0)[0, 0, :, 0], [0, 0, 2, 4, 6, 0, 0, 0])
    assert [float(queue.get()[0].to_framework("numpy")[0, 0, 0, 0]) for _ in range(3)] == [1.0, 4.0, 9.0]


def test_prefill_and_decode_programs_share_one_cache():
    tt0, queue = _device(step_lens=(4, 1))
    tt0.set_active_subgraph(0)
    tt0.push_to_inputs((torch.ones(1, 2, 4, 32),))
    tt0.generate(1, 0)                             # slot 0 of 4 positions: 0..3
    tt0.set_active_subgraph(1)
    tt0.push_to_inputs((torch.ones(1, 2, 1, 32),))
    tt0.generate(1, 4, tokens_per_iter=1, token_id=4)
    queue.get()
    np.testing.assert_allclose(queue.get()[0].to_framework("numpy"), 1.0 + 4 * 2.0)
    np.testing.assert_allclose(_cache(tt0)[0, 0, :, 0], [2, 2, 2, 2, 2, 0, 0, 0])
    assert tt0.get_active_subgraph() == 1


def test_bad_generate_calls_are_clear_errors():
    tt0, _ = _device()
    x = torch.zeros(1, 2, 1, 32)
    with pytest.raises(ValueError, match="loop_count=0"):
        tt0.generate(loop_count=0, write_index=0)
    with pytest.raises(ValueError, match="write_index=-1 is negative"):
        tt0.generate(loop_count=1, write_index=-1)
    with pytest.raises(RuntimeError, match="0 input"):
        tt0.generate(loop_count=1, write_index=0)
    tt0.push_to_inputs((x,))
    with pytest.raises(ValueError, match=r"write_index 8 writes positions \[8, 9\) of past cache past, which holds 8"):
        tt0.generate(loop_count=1, write_index=8)
    tt0.push_to_inputs((x,))
    with pytest.raises(ValueError, match="pass tokens_per_iter=1"):
        tt0.generate(loop_count=1, write_index=0, tokens_per_iter=2, token_id=0)
    with pytest.raises(ValueError, match="token_id >= 0 together with tokens_per_iter > 0"):
        tt0.generate(loop_count=1, write_index=0, token_id=3)
    with pytest.raises(TypeError, match="expects 1"):
        tt0.push_to_inputs((x, torch.zeros(1, 2, 8, 32)))     # caches are the device's, not pushed
    with pytest.raises(ValueError, match="holds 1 module"):
        tt0.set_active_subgraph(1)


def test_generate_before_initialize_or_without_links():
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("step", AddToCache()))
    with pytest.raises(RuntimeError, match="generate before initialize_pipeline"):
        tt0.generate(loop_count=1, write_index=0)
    pybuda.shutdown()
    tt0, _ = _device(link=False)
    tt0.push_to_inputs((torch.zeros(1, 2, 1, 32), torch.zeros(1, 2, 8, 32)))
    with pytest.raises(RuntimeError, match="no past-cache inputs"):
        tt0.generate(loop_count=1, write_index=0)


def test_loopback_naming_a_missing_input_is_an_error():
    class TwoCaches(torch.nn.Module):
        def forward(self, x, past_k, past_v):
            return x, x, x

    pybuda.config._get_global_compiler_config().loopback_outputs = {"past_k": 1, "past_value": 2}
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("step", TwoCaches()))
    pybuda.initialize_pipeline(training=False, sample_inputs=(torch.zeros(1, 2, 1, 32), torch.zeros(1, 2, 8, 32),
                                                              torch.zeros(1, 2, 8, 32)))
    with pytest.raises(ValueError, match=r"loopback_outputs names input\(s\) \['past_value'\]"):
        tt0.push_to_inputs((torch.zeros(1, 2, 1, 32),))


def test_loopback_naming_none_of_a_models_inputs_leaves_it_alone():
    pybuda.config._get_global_compiler_config().loopback_outputs = {"pst": 1}   # meant for another model
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("step", AddToCache()))
    sample = (torch.zeros(1, 2, 1, 32), torch.zeros(1, 2, 8, 32))
    queue = pybuda.initialize_pipeline(training=False, sample_inputs=sample)
    tt0.push_to_inputs(sample)
    pybuda.run_forward()
    assert len(queue.get()) == 2
    tt0.push_to_inputs(sample)
    with pytest.raises(RuntimeError, match=r"no past-cache inputs .*loopback_outputs=\{'pst': 1\}"):
        tt0.generate(1, 0)


def test_link_past_cache_ios_heuristic():
    pybuda.config._get_global_compiler_config().enable_link_past_cache_ios = True
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("step", AddToCache()))
    queue = pybuda.initialize_pipeline(training=False, sample_inputs=(torch.zeros(1, 2, 1, 32),
                                                                      torch.zeros(1, 2, 8, 32)))
    tt0.push_to_inputs((torch.ones(1, 2, 1, 32),))
    tt0.generate(1, 6)
    assert len(queue.get()) == 1 and np.all(_cache(tt0)[:, :, 6] == 2.0)


def test_run_generate_through_a_cpu_device_before_the_tt_device():
    pybuda.config._get_global_compiler_config().loopback_outputs = {"past": 1}
    cpu0 = pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("double", Double()))
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("step", AddToCache()))
    d2d = [queues.Queue()]
    queue = pybuda.initialize_pipeline(training=False, sample_inputs=(torch.zeros(1, 2, 1, 32),
                                                                      torch.zeros(1, 2, 8, 32)), d2d_fwd_queues=d2d)
    cpu0.push_to_inputs((torch.ones(1, 2, 1, 32),))
    cpu0.push_to_inputs((torch.ones(1, 2, 1, 32),))
    pybuda.run_generate(input_count=2, write_index=0, tokens_per_iter=1, token_id=0)
    assert [float(queue.get()[0].to_framework("numpy")[0, 0, 0, 0]) for _ in range(2)] == [2.0, 6.0]
    np.testing.assert_allclose(_cache(tt0)[0, 0, :3, 0], [4.0, 4.0, 0.0])
    assert d2d[0].qsize() == 2 and float(d2d[0].get()[0].to_framework("numpy")[0, 0, 0, 0]) == 2.0   # cpu0 -> tt0


class Double(torch.nn.Module):
    """The CPU stage: doubles the activation and passes the past cache through (sample run only)."""

    def forward(self, x, past=None):
        return (x * 2.0,) if past is None else (x * 2.0, past)


def test_cpu_device_generate_is_a_forward():
    cpu0 = pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("double", Double()))
    queue = pybuda.initialize_pipeline(training=False, sample_inputs=(torch.zeros(1, 2, 1, 32),))
    cpu0.push_to_inputs((torch.ones(1, 2, 1, 32),))
    cpu0.generate(loop_count=1, write_index=0)
    assert float(queue.get()[0].to_framework("numpy")[0, 0, 0, 0]) == 2.0
