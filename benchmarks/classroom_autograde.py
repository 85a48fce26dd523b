"""Stock `nbgrader autograde` against `devcourse classroom autograde` (one task per submission, in local worker
processes) on one class of simulated submissions, on this machine. Both start from the same collected
submissions and a warm grading daemon; the script checks that both end with the same scores per student and
cell in the gradebook, then prints a Markdown table (`--out FILE` also writes it there).

    python benchmarks/classroom_autograde.py --students 40 --workers 2 3 --out benchmarks/results/classroom_autograde.md
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from grader import course, daemon  # noqa: E402
from grader.classroom import generate, source  # noqa: E402

BIN = Path(sys.executable).parent
ASSIGNMENT = "part1-where-tensors-live"
ONLY = ["masked_mean", "noise_batch"]


def edits():
    """Three kinds of learner, in turn: untouched, fixed, half fixed."""
    mm, nb = course.get("masked_mean"), course.get("noise_batch")

    def put(notebook, ex, code):
        c = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{ex.name}-answer")
        c.source = f"%%answer {ex.name}\n{code}"

    def fixed(notebook):
        put(notebook, mm, source.solution_code(mm))
        put(notebook, nb, source.solution_code(nb))

    def half(notebook):
        put(notebook, nb, source.solution_code(nb))

    return [lambda notebook: None, fixed, half]


NOTES = (
    "Where the time goes: with stock autograde a submission costs about 2 s of CPU, half in nbgrader and the "
    "notebook's kernel (starting a kernel alone takes 0.6 s, most of it Python importing ipykernel, IPython and "
    "zmq) and half in the warm grading processes (each exercise graded on the real legs and on the simulated "
    "accelerator at once). Stock autograde grades one submission after "
    "another and keeps about one core busy. `devcourse classroom autograde` runs one nbgrader per core plus "
    "one, in processes forked once nbgrader is imported, all grading through the one warm daemon, and forks "
    "each notebook's kernel from a template that has imported ipykernel already "
    "(grader/classroom/warm_kernels.py): the same kernel code, 0.4 s of CPU less per submission. A Dask "
    "LocalCluster in place of the local processes cost 6 s of CPU to start and a tenth of a core to run; Dask "
    "is used for a cluster (--scheduler). The machine is shared: the ratio moves with the load from other work "
    "(see the load averages)."
)


def busy_seconds() -> float:
    """CPU time the whole machine has spent busy (all processes, the grading daemon's too), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


BUSY: dict[str, float] = {}


def run(*args, cwd) -> float:
    busy = busy_seconds()
    start = time.monotonic()
    p = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    if p.returncode:
        raise SystemExit(f"{args} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    took = time.monotonic() - start
    BUSY[" ".join(map(str, args))] = (busy_seconds() - busy) / took
    return took


def gradebook(root: Path) -> dict:
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "device-course") as gb:
        for s in gb.students:
            for nbk in gb.find_submission(ASSIGNMENT, s.id).notebooks:
                for g in nbk.grades:
                    out[(s.id, g.name)] = (g.auto_score, g.max_score)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--students", type=int, default=40)
    p.add_argument("--workers", type=int, nargs="+", default=[2], help="one run per count of worker processes")
    p.add_argument("--out")
    args = p.parse_args()
    base = Path(tempfile.mkdtemp(prefix="classroom-bench-"))
    stock_root = base / "stock"
    generate.generate(stock_root, only=ONLY)
    run(BIN / "nbgrader", "generate_assignment", ASSIGNMENT, cwd=stock_root)
    released = stock_root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    kinds = edits()
    for i in range(args.students):
        nb = nbformat.read(released, as_version=4)
        kinds[i % len(kinds)](nb)
        folder = stock_root / "submitted" / f"learner{i:03d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / released.name)
        (folder / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")
    ours_roots = {w: base / f"dask-{w}" for w in args.workers}
    for root in ours_roots.values():
        shutil.copytree(stock_root, root)
    daemon.ensure()  # every run finds the grading processes warm
    loads = [("before", os.getloadavg())]
    t_stock = run(BIN / "nbgrader", "autograde", ASSIGNMENT, cwd=stock_root)
    loads.append(("after stock", os.getloadavg()))
    t_ours = {}
    for w, root in ours_roots.items():
        t_ours[w] = run(sys.executable, "-m", "grader.classroom", "autograde", ASSIGNMENT, "--root", root,
                        "--workers", w, cwd=ROOT)
        loads.append((f"after {w} workers", os.getloadavg()))
    same = all(gradebook(stock_root) == gradebook(root) for root in ours_roots.values())
    cores = list(BUSY.values())[-1 - len(t_ours):]  # stock's run, then each of ours
    ceiling = (os.cpu_count() or 1) / cores[0]
    n = args.students
    fmt = lambda la: " / ".join(f"{x:.2f}" for x in la)  # noqa: E731
    table = "\n".join([
        f"# Autograding a class of {n} submissions ({ASSIGNMENT}, {', '.join(ONLY)}: 3 points, 3 test cells)",
        "",
        f"Machine: {platform.node()}, {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
        f"Python {platform.python_version()}; shared with other engineers' work while it ran.",
        "",
        "| run | wall (s) | per submission (s) | speed-up | cores busy (average) | CPU per submission (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        f"| stock `nbgrader autograde` (one after another) | {t_stock:.1f} | {t_stock / n:.2f} | 1.00× | "
        f"{cores[0]:.2f} | {cores[0] * t_stock / n:.2f} |",
        *[f"| `devcourse classroom autograde --workers {w}` (local worker processes) | {t:.1f} | {t / n:.2f} | "
          f"{t_stock / t:.2f}× | {c:.2f} | {c * t / n:.2f} |" for (w, t), c in zip(t_ours.items(), cores[1:])],
        "",
        f"Cores busy: the whole machine's busy CPU time during the run over its wall time (the grading "
        f"processes included); CPU per submission: that busy time over the {n} submissions. Stock autograde "
        f"keeps {cores[0]:.2f} of the {os.cpu_count()} cores busy, so spreading the same work over this machine "
        f"could at best be {ceiling:.2f}× faster; the parallel runs also do less work per submission (their "
        "kernels are forked from a warm template).",
        "",
        "Load average (1 / 5 / 15 min): " + "; ".join(f"{when} {fmt(la)}" for when, la in loads) + ".",
        "",
        f"Same scores per student and cell in every gradebook: {'yes' if same else 'NO'}.",
        "",
        NOTES,
        "",
        f"Reproduce: `python benchmarks/classroom_autograde.py --students {n} --workers "
        f"{' '.join(map(str, args.workers))} --out benchmarks/results/classroom_autograde.md`",
    ]) + "\n"
    print(table)
    if args.out:
        Path(args.out).write_text(table)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
