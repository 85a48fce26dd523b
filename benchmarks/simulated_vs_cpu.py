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


def transformer_step_factory(device):
    torch.manual_seed(0)
    block = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
    model = nn.Sequential(block, nn.Flatten(), nn.Linear(32 * 64, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return _train_step(model, opt, torch.randn(16, 32, 64).to(device), torch.randint(0, 10, (16,)).to(device))


def attention_step_factory(device):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(128, 4, batch_first=True).to(device)
    head = nn.Linear(128, 10).to(device)
    opt = torch.optim.Adam(list(mha.parameters()) + list(head.parameters()), lr=1e-3)
    x, y = torch.randn(32, 64, 128).to(device), torch.randint(0, 10, (32,)).to(device)

    def step():
        opt.zero_grad()
        h, _ = mha(x, x, x, need_weights=False)
        q = h.view(32, 64, 4, 32).transpose(1, 2)
        h = F.scaled_dot_product_attention(q, q, q, is_causal=True).transpose(1, 2).reshape(32, 64, 128)
        loss = F.cross_entropy(head(h.mean(1)), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def amp_step_factory(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.LayerNorm(512), nn.Linear(512, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 256).to(device), torch.randint(0, 10, (64,)).to(device)
    dev_type = torch.device(device).type

    def step():
        opt.zero_grad()
        with torch.autocast(device_type=dev_type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def compiled_step_factory(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    # the same backend on both legs: inductor needs a C++ compiler, and has no code generator for a
    # Python-defined device (grader/simulated/limits.py, compile_runs_eager)
    cmodel = torch.compile(model, backend="aot_eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return _train_step(cmodel, opt, torch.randn(32, 128).to(device), torch.randint(0, 10, (32,)).to(device))


def cnn_batches_factory(device):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = [(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))) for _ in range(4)]

    def epoch():
        total = 0.0
        for xb, yb in batches:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        return total

    return epoch


WORKLOADS = [
    ("MLP 784-256-10 train step (batch 64, Adam)", mlp_step_factory, 30),
    ("CNN 2 conv on 1x28x28 train step (batch 32, SGD)", cnn_step_factory, 20),
    ("DataLoader epoch (2000 samples, batch 64, pin_memory on sim)", loader_epoch_factory, 3),
    ("CNN with BatchNorm, 4 batches of 32x3x32x32 (SGD momentum)", cnn_batches_factory, 5),
    ("Transformer encoder block (d=64, 4 heads, seq 32, batch 16) train step (AdamW)", transformer_step_factory, 15),
    ("MultiheadAttention + scaled_dot_product_attention (d=128, 4 heads, seq 64, batch 32) train step (Adam)",
     attention_step_factory, 15),
    ("AMP autocast bfloat16 MLP train step (AdamW)", amp_step_factory, 20),
    ("torch.compile (aot_eager) MLP train step (SGD)", compiled_step_factory, 20),
]


def time_pair(cpu_fn, sim_fn, n):
    """(median, min) seconds per call of each; the calls alternate, so load from elsewhere hits both alike.
    On a shared machine the minimum is the steadier measure of the work itself."""
    cpu_fn(), sim_fn()  # warm-up
    times = {cpu_fn: [], sim_fn: []}
    for _ in range(n):
        for fn in (cpu_fn, sim_fn):
            t0 = time.perf_counter()
            fn()
            times[fn].append(time.perf_counter() - t0)
    c, s = times[cpu_fn], times[sim_fn]
    return (statistics.median(c), min(c)), (statistics.median(s), min(s))


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

    # install first, as a grader does (registration is process-wide); CPU tensors never reach the
    # simulator's Python code, so the CPU leg is unaffected.
    gs.install()
    rows = []
    for name, factory, n in WORKLOADS:
        reps = max(1, int(n * args.scale))
        (cmed, cmin), (smed, smin) = time_pair(factory("cpu"), factory("sim"), reps)
        rows.append((name, cmed * 1e3, smed * 1e3, smed / cmed, cmin * 1e3, smin * 1e3, smin / cmin))

    header = ("| workload | CPU median (ms) | sim median (ms) | sim / CPU (median) | CPU min (ms) | sim min (ms) "
              "| sim / CPU (min) |\n|---|---:|---:|---:|---:|---:|---:|\n")
    body = "".join(f"| {n} | {c:.2f} | {s:.2f} | {r:.2f}x | {c2:.2f} | {s2:.2f} | {r2:.2f}x |\n"
                   for n, c, s, r, c2, s2, r2 in rows)
    table = header + body
    print(table)
    meta = (
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}\n"
        f"- machine: {platform.machine()}, {os.cpu_count()} logical cores "
        f"(torch threads: {torch.get_num_threads()}), CPU: {cpu_model()}\n"
        f"- python {platform.python_version()}, torch {torch.__version__}\n"
        f"- target: sim at most 3x CPU\n"
        f"- load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 shared cores)\n"
    )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("# Simulated device vs CPU\n\n" + meta + "\n" + table)
        f.write("\nWall time per call after one warm-up call each (median and minimum over the repeats), CPU and sim calls "
                "alternating; both legs in one process (`install()` first; CPU tensors never reach the simulator's Python "
                "code). The machine is shared with other processes: the minimum is the steadier measure. The AMP leg uses "
                "`torch.autocast('cpu')` on the CPU; the compile leg uses `backend='aot_eager'` on both (inductor has no "
                "code generator for the simulated device). Produced by `python benchmarks/simulated_vs_cpu.py`.\n")
    return rows


if __name__ == "__main__":
    main()
