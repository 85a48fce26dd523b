"""How long a learner waits for a check, against the targets of the grading engine:

    first check in a new shell (no grading process running yet)   <= 2.0 s wall
    every later check                                              <= 0.5 s wall
    every exercise checked, one after another                      <= 20 s wall

A first check of an exercise that trains (builds an optimizer) is timed apart: PyTorch's optimizers import
torch._dynamo at first use, as long again as `import torch`, which the grading processes avoid
(grader/engine/lazy_dynamo.py). `python -c "import torch"`, the floor under a first check, is printed beside both.

The later checks are timed twice: right after the first (as when a learner fixes and re-checks at once, while
the grading processes still finish warming up), and once per exercise in the all-exercises run that follows
(warm).

Each check is the learner's real command (`devcourse check NAME --solution`) in a fresh process, as a
shell would run it. Prints a Markdown table; `--out FILE` also writes it there.

    python benchmarks/grading_speed.py --out benchmarks/results/grading_speed.md
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.catalog import course  # noqa: E402

TARGETS = {"first check": 2.0, "first check, an exercise that trains": 2.0, "later check (median)": 0.5,
           "later check (worst)": 0.5, "later check, warm (median)": 0.5, "later check, warm (worst)": 0.5,
           "all exercises": 20.0}


def check(name: str, env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "grader", "check", name, "--solution"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"devcourse check {name} --solution failed:\n{done.stdout}{done.stderr}")
    return took


def import_seconds() -> float:
    """The floor under a first check: a grading process must import torch."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


@contextlib.contextmanager
def new_shell():
    """The environment of a new shell's checks: a daemon folder of its own, so no grading process runs yet;
    the grading processes its checks start are stopped at the end."""
    env = {**os.environ, "DEVCOURSE_DAEMON_DIR": tempfile.mkdtemp(prefix="devcourse-bench-"), "PYTHONPATH": str(ROOT)}
    try:
        yield env
    finally:
        subprocess.run([sys.executable, "-m", "grader", "stop"], cwd=ROOT, env=env, capture_output=True)


def trains(exercise) -> bool:
    return "torch.optim" in exercise.solution_file.read_text()


def accelerators() -> str:
    """The machine's GPUs, as nvidia-smi names them (no torch here: the checks measure its import)."""
    try:
        found = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "no GPU"
    names = [line.split(":", 1)[1].split("(")[0].strip() for line in found.splitlines() if line.startswith("GPU")]
    return f"{len(names)} × {names[0]}" if names else "no GPU"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path)
    p.add_argument("--repeat", type=int, default=10, help="later checks to time")
    p.add_argument("--cold", type=int, default=3, help="first checks to time (each with no daemon running)")
    args = p.parse_args()
    exercises = course.load()
    names = [e.name for e in exercises]
    training = next(e.name for e in exercises if trains(e))
    firsts, floors, later, later_names, each = [], [], [], [], {}
    trained, trained_floors = [], []
    for _ in range(args.cold):
        trained_floors.append(import_seconds())
        with new_shell() as env:
            trained.append(check(training, env))
        floors.append(import_seconds())
        with new_shell() as env:
            firsts.append(check(names[0], env))
            if not later:  # the later checks follow the first at once, as when a learner fixes and re-checks
                later_names = [names[i % len(names)] for i in range(args.repeat)]
                later = [check(name, env) for name in later_names]
                start = time.perf_counter()
                for name in names:
                    each[name] = check(name, env)
                everything = time.perf_counter() - start
    measured = {"first check": statistics.median(firsts),
                "first check, an exercise that trains": statistics.median(trained),
                "later check (median)": statistics.median(later), "later check (worst)": max(later),
                "later check, warm (median)": statistics.median(each.values()),
                "later check, warm (worst)": max(each.values()), "all exercises": everything}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Grading speed: {platform.node()}, {os.cpu_count()} cores, {accelerators()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, load average {load:.1f} at the end; {len(names)} exercises, "
        f"{args.repeat} later checks.",
        "",
        "| what | seconds (wall) | target | met |",
        "| --- | ---: | ---: | --- |",
    ]
    for what, seconds in measured.items():
        lines.append(f"| {what} | {seconds:.2f} | {TARGETS[what]:.1f} | {'yes' if seconds <= TARGETS[what] else 'NO'} |")
    slowest = sorted(each.items(), key=lambda kv: -kv[1])[:5]
    lines += [
        "",
        f"First check, each of {args.cold} cold starts: {', '.join(f'{s:.2f}' for s in firsts)} s (median above); "
        f"`python -c \"import torch\"` just before each: {', '.join(f'{s:.2f}' for s in floors)} s. A first "
        "check cannot take less than that import, which the grading processes must do.",
        "",
        f"First check of {training} (an exercise that trains), each of {args.cold} cold starts: "
        f"{', '.join(f'{s:.2f}' for s in trained)} s; `python -c \"import torch\"` just before each: "
        f"{', '.join(f'{s:.2f}' for s in trained_floors)} s.",
        "",
        "Later checks, in order: " + ", ".join(f"{n} {s:.2f}" for n, s in zip(later_names, later)) + " s.",
        "",
        "Slowest exercises in the all-exercises run: " + ", ".join(f"{n} {s:.2f} s" for n, s in slowest) + ".",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
