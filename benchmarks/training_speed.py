"""Simulated training step vs the same step in PyTorch, for a 2-layer BERT-style classifier.

    python benchmarks/training_speed.py [--steps N] [--hidden H] [--seq S] [--batch B]

Both sides train the same model from the same weights on the same batches: on the simulator
(tt0: forward and backward device graphs, SGD; cpu0: the PyTorch CrossEntropyLoss), and in
PyTorch (forward, loss, backward, torch.optim.SGD). Steps alternate between the two so machine
load hits both alike; the median step time of each (wall and CPU time) is reported with their
ratio (target <= 4x) and the losses' largest relative difference. training_profile.py splits the
simulated step into kernel work and what surrounds it.
"""

from __future__ import annotations

import argparse
import copy
import queue
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 4.0


def parse_args(argv=None, description: str = __doc__.splitlines()[0]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both sides (default 1: on a "
                        "loaded machine torch's thread pool stalls and flatters the ratio)")
    return parser.parse_args(argv)


def describe(args) -> str:
    """The measured model's one-line description (both training benchmarks print it first)."""
    return (f"BERT-style classifier: 2 layers, hidden {args.hidden}, seq {args.seq}, batch {args.batch}, "
            f"torch threads {args.threads}")


def start_training(args, total: int):
    """The classifier on tt0 (SGD) with its loss on cpu0, `total` batches queued and the pipeline
    initialised: (pybuda, the PyTorch reference copy, inputs, targets, compile seconds)."""
    sys.path.insert(0, str(ROOT))
    import torch

    torch.set_num_threads(args.threads)

    import pybuda

    from tvm_buda.demo_models import bert_classifier

    model = bert_classifier(vocab=128, hidden=args.hidden, intermediate=4 * args.hidden, positions=args.seq)
    reference = copy.deepcopy(model)
    g = torch.Generator().manual_seed(1)
    xs = [torch.randint(0, 128, (args.batch, args.seq), generator=g) for _ in range(total)]
    ys = [torch.randint(0, 4, (args.batch,), generator=g) for _ in range(total)]

    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("bert", model),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.05))
    cpu0 = pybuda.CPUDevice("cpu0")
    cpu0.place_loss_module(pybuda.PyTorchModule("loss", torch.nn.CrossEntropyLoss()))
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        cpu0.push_to_target_inputs(y)
    start = time.perf_counter()
    pybuda.initialize_pipeline(training=True)
    return pybuda, reference, xs, ys, time.perf_counter() - start


def main(argv=None) -> int:
    args = parse_args(argv)
    total = args.steps + 1
    pybuda, reference, xs, ys, compile_seconds = start_training(args, total)
    import torch

    torch_opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    loss_q = queue.Queue()
    sim_times, torch_times, sim_cpu, torch_cpu, torch_losses = [], [], [], [], []
    for step in range(total):
        start, cpu = time.perf_counter(), time.process_time()
        pybuda.run_training(steps=1, loss_queue=loss_q)
        sim_times.append(time.perf_counter() - start)
        sim_cpu.append(time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        torch_opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(reference(xs[step]), ys[step])
        loss.backward()
        torch_opt.step()
        torch_times.append(time.perf_counter() - start)
        torch_cpu.append(time.process_time() - cpu)
        torch_losses.append(loss.item())
    sim_losses = [float(loss_q.get()[0].value()) for _ in range(total)]
    pybuda.shutdown()
    sim = statistics.median(sim_times[1:])  # the first step of each side warms caches
    native = statistics.median(torch_times[1:])
    sim_c, native_c = statistics.median(sim_cpu[1:]), statistics.median(torch_cpu[1:])
    diff = max(abs(a - b) / abs(b) for a, b in zip(sim_losses, torch_losses))
    ratio = sim / native
    print(describe(args))
    print(f"compile (forward + backward graphs): {compile_seconds:.1f} s")
    print(f"training step: simulated {1e3 * sim:.1f} ms, PyTorch {1e3 * native:.1f} ms, ratio {ratio:.2f}x "
          f"(target <= {TARGET_RATIO:g}x{'' if ratio <= TARGET_RATIO else f', missed by {100 * (ratio / TARGET_RATIO - 1):.0f}%'})")
    print(f"CPU time (steadier on a loaded machine): simulated {1e3 * sim_c:.1f} ms, PyTorch {1e3 * native_c:.1f} ms, "
          f"ratio {sim_c / native_c:.2f}x")
    print(f"losses over {total} steps: largest relative difference {100 * diff:.2f}%")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)
    print(bf16_gemm.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
