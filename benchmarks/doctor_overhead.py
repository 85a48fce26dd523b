"""Benchmark: `devcourse doctor` on a script vs running the script plainly on the CPU.

Run:  python benchmarks/doctor_overhead.py [--repeats N]
Prints a table and writes benchmarks/results/doctor_overhead.md.

Each workload is a device-agnostic training (or evaluation) script that times its own loop and prints it. Plainly
it runs as `python script.py` on the CPU (no accelerator: CUDA_VISIBLE_DEVICES=""); under the doctor it runs on
the simulated accelerator, confined, inside the instruments, with --steps high enough that the script runs to its
end (the same work). Two ratios: the whole command (what a learner waits for: Python, torch's import, the
doctor's set-up and report) and the script's own loop (the cost of the instruments per step). Runs alternate
(plain, doctor) and the minimum over the repeats is the steadier measure on a shared machine. Both run with
one CPU thread for torch (OMP_NUM_THREADS=1), so that their ratio does not depend on how many cores the
machine's other work leaves free.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEAD = '''\
import time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
'''
TAIL = '''\
if device.type != "cpu":
    torch.accelerator.synchronize()  # the loop's work is done before the clock stops (the doctor checks it)
print(f"LOOP_SECONDS {time.perf_counter() - started:.4f}")
'''
WORKLOADS = {
    "MLP classifier, DataLoader (pinned), AdamW, 60 steps of batch 64": '''\
data = TensorDataset(torch.randn(60 * 64, 256), torch.randint(0, 10, (60 * 64,)))
loader = DataLoader(data, batch_size=64, pin_memory=device.type != "cpu")
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
total = torch.zeros((), device=device)
started = time.perf_counter()
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    total += loss.detach()
print(total.item())
''',
    "CNN, 40 steps of batch 32x3x32x32, SGD momentum": '''\
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(32, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
started = time.perf_counter()
for step in range(40):
    x = torch.randn(32, 3, 32, 32).to(device)
    y = torch.randint(0, 10, (32,)).to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
''',
    "Transformer encoder language model (d=64, 4 heads, seq 32), 30 steps, AdamW": '''\
layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
model = nn.ModuleDict({"embed": nn.Embedding(100, 64), "body": nn.TransformerEncoder(layer, 2),
                       "head": nn.Linear(64, 100)}).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
causal = nn.Transformer.generate_square_subsequent_mask(31, device=device)
started = time.perf_counter()
for step in range(30):
    tokens = torch.randint(0, 100, (16, 32)).to(device)
    h = model["body"](model["embed"](tokens[:, :-1]), mask=causal, is_causal=True)
    loss = nn.functional.cross_entropy(model["head"](h).reshape(-1, 100), tokens[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step()
''',
}


def loop_seconds(output: str) -> float | None:
    match = re.search(r"LOOP_SECONDS ([0-9.]+)", output)
    return float(match.group(1)) if match else None


def plain(script: Path) -> tuple[float, float | None]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    started = time.perf_counter()
    run = subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if run.returncode:
        raise RuntimeError(run.stderr)
    return wall, loop_seconds(run.stdout)


SIMULATED = ("import runpy, sys, grader.simulated as gs; gs.install(2); sys.argv = [sys.argv[1]]; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")


def simulated(script: Path) -> float | None:
    """The script's loop on the simulated accelerator without the doctor: how much of the doctor's time is the
    simulator's own (benchmarks/results/simulated_vs_cpu.md) rather than its instruments'."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", SIMULATED, str(script)], cwd=script.parent, env=env,
                         capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(run.stderr)
    return loop_seconds(run.stdout)


def doctored(script: Path) -> tuple[float, float | None, dict]:
    from grader.doctor import diagnose

    started = time.perf_counter()
    result = diagnose(str(script), steps=10**6, cwd=str(script.parent), timeout=600)
    wall = time.perf_counter() - started
    if result["outcome"] != "finished":
        raise RuntimeError(result)
    return wall, loop_seconds(result["output"]), result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "doctor_overhead.md"))
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"  # both runs inherit it (the module docstring says why)
    import torch

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, body in WORKLOADS.items():
            script = Path(folder) / f"workload_{len(rows)}.py"
            script.write_text(HEAD + textwrap.dedent(body) + TAIL)
            p_wall, p_loop, d_wall, d_loop, s_loop = [], [], [], [], []
            findings = None
            for _ in range(args.repeats):
                w, loop = plain(script)
                p_wall.append(w)
                p_loop.append(loop)
                w, loop, result = doctored(script)
                d_wall.append(w)
                d_loop.append(loop)
                s_loop.append(simulated(script))
                findings = len(result["findings"])
            rows.append((name, min(p_wall), min(d_wall), min(p_loop), min(d_loop), min(s_loop), findings))
            print(f"{name}: command {min(p_wall):.2f} s -> {min(d_wall):.2f} s ({min(d_wall) / min(p_wall):.2f}x); "
                  f"loop {min(p_loop):.3f} s -> {min(d_loop):.3f} s ({min(d_loop) / min(p_loop):.2f}x)", flush=True)
    lines = [
        "# `devcourse doctor` overhead over running the script plainly on the CPU",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- machine: {platform.machine()}, {os.cpu_count()} logical cores (shared), python {platform.python_version()}, "
        f"torch {torch.__version__}",
        f"- load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "- target: at most 3x",
        "- torch threads: 1 in both (OMP_NUM_THREADS=1)",
        f"- minimum of {args.repeats} runs each, plain and doctor alternating",
        "",
        "| workload | plain command (s) | doctor command (s) | command ratio | plain loop (s) | doctor loop (s) | "
        "loop ratio | loop on sim without the doctor (s) | of it, the simulator's | findings |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, pw, dw, pl, dl, sl, findings in rows:
        lines.append(f"| {name} | {pw:.2f} | {dw:.2f} | {dw / pw:.2f}x | {pl:.3f} | {dl:.3f} | {dl / pl:.2f}x | "
                     f"{sl:.3f} | {sl / pl:.2f}x | {findings} |")
    lines += ["", "The command is the whole `python script.py` against the whole `devcourse doctor script.py` "
              "(Python's and torch's start-up included, and for the doctor its confined process, the simulator's "
              "set-up and the analysis); the loop is what the script measures of its own loop. The doctor runs the "
              "script on the simulated accelerator (sim:1); plainly it runs on the CPU. The last ratio is the script's "
              "loop on the simulator without the doctor (installed by hand, runpy) over the plain CPU loop: the part "
              "of the loop ratio that is the simulator's own. Produced by "
              "`python benchmarks/doctor_overhead.py`."]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
