"""Benchmark: exercise-sized workloads on the simulated device vs plain CPU.

Run:  python benchmarks/simulated_vs_cpu.py [--repeats N]
Prints a table and writes benchmarks/results/simulated_vs_cpu.md.
The simulated device is installed in this process (process-wide, irreversible);
the CPU leg runs first in the same process with identical code.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def _train_step(model, opt, x, y):
    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def mlp_step_factory(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return _train_step(model, opt, torch.randn(64, 784).to(device), torch.randint(0, 10, (64,)).to(device))


def cnn_step_factory(device):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 7 * 7, 10),
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _train_step(model, opt, torch.randn(32, 1, 28, 28).to(device), torch.randint(0, 10, (32,)).to(device))


def loader_epoch_factory(device):
    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(2000, 784), torch.randint(0, 10, (2000,)))
    pin = device != "cpu"
    loader = DataLoader(ds, batch_size=64, shuffle=True, pin_memory=pin)
    model = nn.Linear(784, 10).to(device)

    def epoch():
        total = 0.0
        with torch.no_grad():
            for xb, yb in loader:
                xb = xb.to(device, non_blocking=True)
                yb = yb.to(device, non_blocking=True)
                total += F.cross_entropy(model(xb), yb).item()
        return total

    return epoch


WORKLOADS = [
    ("MLP 784-256-10 train step (batch 64, Adam)", mlp_step_factory, 30),
    ("CNN 2 conv on 1x28x28 train step (batch 32, SGD)", cnn_step_factory, 20),
    ("DataLoader epoch (2000 samples, batch 64, pin_memory on sim)", loader_epoch_factory, 3),
]


def time_pair(cpu_fn, sim_fn, n):
    """Median seconds per call of each; the calls alternate, so load from elsewhere hits both alike."""
    cpu_fn(), sim_fn()  # warm-up
    times = {cpu_fn: [], sim_fn: []}
    for _ in range(n):
        for fn in (cpu_fn, sim_fn):
            t0 = time.perf_counter()
            fn()
            times[fn].append(time.perf_counter() - t0)
    return statistics.median(times[cpu_fn]), statistics.median(times[sim_fn])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="multiply repeat counts")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results", "simulated_vs_cpu.md"))
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))

    import grader.simulated as gs

    # install first: the autograd engine sizes its device queues at the first
    # backward of the process, so the backend must exist before any backward.
    gs.install()
    rows = []
    for name, factory, n in WORKLOADS:
        reps = max(1, int(n * args.scale))
        cpu, sim = time_pair(factory("cpu"), factory("sim"), reps)
        rows.append((name, cpu * 1e3, sim * 1e3, sim / cpu))

    header = "| workload | CPU median (ms) | sim median (ms) | sim / CPU |\n|---|---:|---:|---:|\n"
    body = "".join(f"| {n} | {c:.2f} | {s:.2f} | {r:.2f}x |\n" for n, c, s, r in rows)
    table = header + body
    print(table)
    meta = (
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}\n"
        f"- machine: {platform.machine()}, {os.cpu_count()} logical cores "
        f"(torch threads: {torch.get_num_threads()}), CPU: {cpu_model()}\n"
        f"- python {platform.python_version()}, torch {torch.__version__}\n"
        f"- target: sim at most 3x CPU\n"
    )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("# Simulated device vs CPU\n\n" + meta + "\n" + table)
        f.write("\nMedian wall time per call after one warm-up call each, CPU and sim calls alternating; both legs in one process "
                "(`install()` first; CPU tensors never reach the simulator's Python code). Produced by `python benchmarks/simulated_vs_cpu.py`.\n")
    return rows


if __name__ == "__main__":
    main()
