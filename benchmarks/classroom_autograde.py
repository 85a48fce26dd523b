"""Stock `nbgrader autograde` against `devcourse classroom autograde` on one class of simulated submissions,
on this machine: part 1 of the book (its exercises, one notebook), `--students` learners whose answers mix
honest right fixes, honest wrong ones and exercises left untouched.

The answers come from the course's own submissions (the reference fix and tests/submissions/NAME/right_*.py,
wrong_*.py), drawn per learner and exercise (45 % right, 30 % wrong, 25 % untouched, seeded). Two classes:

* `variants`: the answers as drawn, so learners who drew the same variant hand in the same program (as
  learners who make the same one-line fix do);
* `distinct`: every edited answer ends with a comment naming its learner, so no two learners' edited
  answers are the same text and only untouched exercises repeat: the worst case for grading each distinct
  answer once.

Runs alternate (stock, ours, ours, stock) so that a change of load on a shared machine hits both. Every run
starts from a fresh copy of the collected class and a warm grading daemon; the script checks that stock and
ours end with the same scores per learner and cell, then prints a Markdown table (`--out FILE` writes it).

    python benchmarks/classroom_autograde.py --students 40 --out benchmarks/results/classroom_autograde.md
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from grader.engine import daemon  # noqa: E402
from grader.classroom import generate, source  # noqa: E402

BIN = Path(sys.executable).parent
ASSIGNMENT = "part1-where-tensors-live"
SHARES = (("right", 0.45), ("wrong", 0.30), ("untouched", 0.25))


def variants(ex) -> dict[str, list[str]]:
    folder = ROOT / "tests" / "submissions" / ex.name
    right = [source.solution_code(ex)] + [source.split_docstring(f)[1] for f in sorted(folder.glob("right_*.py"))]
    wrong = [source.split_docstring(f)[1] for f in sorted(folder.glob("wrong_*.py"))]
    return {"right": right, "wrong": wrong}


def make_class(root: Path, students: int, distinct: bool, seed: int = 7) -> dict[str, int]:
    """Write submitted/<learner>/<assignment>/ for every learner; how many answers of each kind."""
    rng = random.Random(seed)
    released = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    exercises = _part1()
    pool = {e.name: variants(e) for e in exercises}
    kinds = {k: 0 for k, _ in SHARES}
    for i in range(students):
        learner = f"learner{i:03d}"
        nb = nbformat.read(released, as_version=4)
        for ex in exercises:
            kind = rng.choices([k for k, _ in SHARES], [w for _, w in SHARES])[0]
            kinds[kind] += 1
            if kind == "untouched":
                continue
            code = rng.choice(pool[ex.name][kind])
            if distinct:
                code += f"# {learner}\n"
            cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{ex.name}-answer")
            cell.source = f"%%answer {ex.name}\n{code}"
        folder = root / "submitted" / learner / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / released.name)
        (folder / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")
    return kinds


def _part1():
    plan = generate.assignments()
    return [e for _, exs in plan[0][2] for e in exs]


def busy_seconds() -> float:
    """CPU time the whole machine has spent busy (all processes, the grading daemon's too), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def grading_cpu() -> float:
    """CPU seconds the warm grading processes of this course folder (grader.engine.daemon) have spent, their finished
    workers included (each process's own time and its reaped children's, from /proc)."""
    marker = f"--dir {daemon.folder()}"
    total = 0.0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker not in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def run(*args, cwd) -> tuple[float, float, float, float, str]:
    """(wall seconds, cores busy on average, CPU seconds of the run and of the grading processes, of which the
    grading processes', stdout)"""
    import resource

    busy, grading = busy_seconds(), grading_cpu()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    if p.returncode:
        raise SystemExit(f"{args} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    took = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    grading = grading_cpu() - grading
    cpu = (after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime) + grading
    return took, (busy_seconds() - busy) / took, cpu, grading, p.stdout


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
    p.add_argument("--out")
    p.add_argument("--classes", default="variants,distinct",
                   help="comma-separated: variants, distinct (default both; one alone takes half the time)")
    p.add_argument("--rounds", type=int, default=1,
                   help="grade each class this many times each way, alternating; the table gives every round and "
                        "the median speed-up (on a shared machine one round's ratio depends on the load of the time)")
    args = p.parse_args()
    chosen = args.classes.split(",")
    base = Path(tempfile.mkdtemp(prefix="classroom-bench-"))
    template = base / "template"
    generate.generate(template, only=[e.name for e in _part1()])
    run(BIN / "nbgrader", "generate_assignment", ASSIGNMENT, cwd=template)
    classes = {}
    for name, distinct in (("variants", False), ("distinct", True)):
        if name not in chosen:
            continue
        root = base / name
        shutil.copytree(template, root)
        classes[name] = make_class(root, args.students, distinct)
    daemon.ensure()  # every run finds the grading processes warm
    one_round = [(c, w) for c, w in [("variants", "stock"), ("variants", "ours"), ("distinct", "ours"),
                                     ("distinct", "stock")] if c in classes]
    order = [(c, w, r) for r in range(args.rounds) for c, w in one_round]
    results, loads, same, distinct_answers = {}, [("before", os.getloadavg())], {}, {}
    for cls, who, rnd in order:
        root = base / f"{cls}-{who}-{rnd}"
        shutil.copytree(base / cls, root)
        if who == "stock":
            results[(cls, who, rnd)] = run(BIN / "nbgrader", "autograde", ASSIGNMENT, cwd=root)
        else:
            results[(cls, who, rnd)] = run(sys.executable, "-m", "grader.classroom", "autograde", ASSIGNMENT,
                                           "--root", root, "--unisolated", cwd=ROOT)
            line = next((ln for ln in results[(cls, who, rnd)][4].splitlines() if "distinct answer" in ln), "")
            distinct_answers[cls] = line.split(": ", 1)[-1].rstrip(".")
        loads.append((f"after {who} ({cls}{f', round {rnd + 1}' if args.rounds > 1 else ''})", os.getloadavg()))
        print(f"{loads[-1][0]}: {results[(cls, who, rnd)][0]:.1f} s wall, {results[(cls, who, rnd)][2]:.1f} s CPU, "
              f"load {loads[-1][1][0]:.2f}", file=sys.stderr, flush=True)  # a run cut short still tells this much
    for cls in classes:
        same[cls] = all(gradebook(base / f"{cls}-stock-{r}") == gradebook(base / f"{cls}-ours-{r}")
                        for r in range(args.rounds))
    n = args.students
    fmt = lambda la: " / ".join(f"{x:.2f}" for x in la)  # noqa: E731
    rows, medians = [], []
    for cls, kinds in classes.items():
        ratios = []
        for rnd in range(args.rounds):
            (ts, cs, ps, gs, _), (to, co, po, go, _) = results[(cls, "stock", rnd)], results[(cls, "ours", rnd)]
            ratios.append(ts / to)
            label = f"{cls}{f' (round {rnd + 1})' if args.rounds > 1 else ''}"
            rows.append(f"| {label} | stock `nbgrader autograde` | {ts:.1f} | {ts / n:.2f} | 1.00× | {ps / n:.2f} | "
                        f"{gs / n:.2f} | 1.00× | {cs:.2f} |")
            rows.append(f"| {label} | `devcourse classroom autograde` | {to:.1f} | {to / n:.2f} | **{ts / to:.1f}×** "
                        f"| {po / n:.2f} | {go / n:.2f} | {ps / po:.1f}× | {co:.2f} |")
        if args.rounds > 1:
            import statistics

            medians.append(f"{cls}: **{statistics.median(ratios):.1f}×** (rounds: "
                           + ", ".join(f"{r:.1f}×" for r in ratios) + ")")
    table = "\n".join([
        f"# Autograding a class: {ASSIGNMENT} ({len(_part1())} exercises, one notebook), {n} submissions",
        "",
        f"Machine: {platform.node()}, {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
        f"Python {platform.python_version()}, no GPU; shared with other engineers' work while it ran (see the "
        "load averages), so the runs alternate, in this order: "
        + ", ".join(f"{who} on `{cls}`" for cls, who in one_round)
        + (f", repeated {args.rounds} times" if args.rounds > 1 else "") + ".",
        "",
        "Answers per class (learner × exercise): " + ", ".join(f"{k} {v}" for k, v in next(iter(classes.values())).items())
        + " (the same draw in both classes).",
        "",
        "| class | run | wall (s) | wall per submission (s) | speed-up (wall) | CPU per submission (s) | "
        "of which grading processes (s) | less CPU | machine's cores busy |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        *([f"Median speed-up (wall) over the {args.rounds} rounds: " + "; ".join(medians) + ".", ""] if medians else []),
        "Distinct answers graded by ours: " + "; ".join(f"{cls}: {d}" for cls, d in distinct_answers.items()) + ".",
        "",
        "Same scores per learner and cell in stock's and ours' gradebooks: "
        + ", ".join(f"{cls} {'yes' if ok else 'NO'}" for cls, ok in same.items()) + ".",
        "",
        "Load average (1 / 5 / 15 min): " + "; ".join(f"{when} {fmt(la)}" for when, la in loads) + ".",
        "",
        "CPU per submission: the CPU time of the run's own processes (nbgrader, the kernels for stock) and of the "
        "warm grading processes that graded for it, over the submissions: the work each way does, which other "
        "work on the machine does not change much. Machine's cores busy: the whole machine's busy CPU time during "
        "the run over its wall time, other engineers' work included (2.00: saturated, so the wall times depend on "
        "the load at the time).",
        "",
        f"Reproduce: `python benchmarks/classroom_autograde.py --students {n} --classes {','.join(classes)} "
        f"{f'--rounds {args.rounds} ' if args.rounds > 1 else ''}--out "
        "benchmarks/results/classroom_autograde.md`",
    ]) + "\n"
    print(table)
    if args.out:
        Path(args.out).write_text(table)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
