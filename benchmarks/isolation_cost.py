"""What confining every grading (grader/guard/sandbox.py, containment.py, namespaces.py) costs: confine() and
confine_job() themselves, in forked children, a contained fork against a plain one, and a
whole check of an exercise's solution graded with and without isolation, in alternation (two warm daemons of
their own, one started with DEVCOURSE_ISOLATION=off), so that the machine's load falls on both alike.

    python benchmarks/isolation_cost.py --runs 10 --out benchmarks/results/isolation_cost.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.engine import daemon, runner  # noqa: E402
from grader.guard import sandbox  # noqa: E402
from grader.catalog import course  # noqa: E402


def confine_times(n: int, daemons_network: bool = False) -> list[float]:
    """Seconds confine() takes, each in a fresh fork (it cannot be undone); `daemons_network`: forked from a
    process in a network namespace with nothing up, as a daemon's workers are (grader.guard.namespaces.leave_network),
    so that confine() makes no namespace of its own."""
    from grader.guard import namespaces

    sandbox.status()  # imported and probed once, as the zygote does before it forks its workers
    times = []
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            if daemons_network:
                namespaces.leave_network()
            private = sandbox.private_folder()
            start = time.perf_counter()
            iso = sandbox.confine(private)
            os.write(w, f"{time.perf_counter() - start if iso.available else -1}".encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            times.append(float(f.read()))
        os.waitpid(pid, 0)
    for folder in Path(tempfile.gettempdir()).glob(f"{sandbox.PRIVATE_PREFIX}*"):
        sandbox.remove(folder)  # the forks' own folders (a zygote's handler removes them)
    return times


def confine_job_times(n: int) -> list[float]:
    """Seconds confine_job() takes (the read allow-list's layer, the private folder given to nobody, the drop of
    privileges), each in a fresh fork confined first, as a worker does before learner code runs."""
    times = []
    check = str(course.get("masked_mean").grader_file)
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            private = sandbox.private_folder()
            sandbox.confine(private)
            start = time.perf_counter()
            iso = sandbox.confine_job(private, [check], [os.path.dirname(check)])
            os.write(w, f"{time.perf_counter() - start if 'allow-list' in iso.how else -1}".encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            times.append(float(f.read()))
        os.waitpid(pid, 0)
    for folder in Path(tempfile.gettempdir()).glob(f"{sandbox.PRIVATE_PREFIX}*"):
        sandbox.remove(folder)
    return times


def fork_times(n: int, how: str) -> list[float]:
    """Seconds from the fork of a grading process until its judge has its wait status (and, contained, its
    keeper's report), for a child that ends at once, timed in a handler (a fork of this process, as a zygote's
    is): "plain" os.fork; "contained" containment.fork_contained with an intermediate (a batch worker's);
    "handler" fork_contained(last=True), the handler unsharing the namespace itself (a worker's)."""
    import torch  # noqa: F401 - forked as big as a zygote's handler is

    from grader.guard import containment

    times = []
    for _ in range(n):
        r, w = os.pipe()
        handler = os.fork()
        if handler == 0:
            start = time.perf_counter()
            pid, report = (os.fork(), None) if how == "plain" else containment.fork_contained(last=how == "handler")
            if pid == 0:
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            containment.outcome(report, status)
            os.write(w, f"{time.perf_counter() - start}".encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            times.append(float(f.read()))
        os.waitpid(handler, 0)
    return times


def grade_time(exercise, where: Path, isolation: str) -> float:
    os.environ["DEVCOURSE_DAEMON_DIR"] = str(where)
    os.environ[sandbox.OFF_VARIABLE] = isolation
    start = time.perf_counter()
    g = runner.grade(exercise, exercise.solution_file)
    took = time.perf_counter() - start
    assert g.passed, [r.message for r in g.failures]
    assert bool(g.unisolated) == (isolation == "off"), g.isolation
    return took


def warm_check_times(exercise, daemons: dict[str, Path], runs: int) -> dict[str, list[float]]:
    """`runs` warm checks of the exercise's solution on each daemon ("on": isolated, "off": not), alternating,
    each mode first half of the time, after two checks on each (the daemon started, its first check made)."""
    for mode, where in daemons.items():
        for _ in range(2):
            grade_time(exercise, where, mode)
    order = [mode for run in range(runs) for mode in (("on", "off") if run % 2 else ("off", "on"))]
    times: dict[str, list[float]] = {mode: [] for mode in daemons}
    for mode in order:
        times[mode].append(grade_time(exercise, daemons[mode], mode))
    return times


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--exercises", nargs="+", default=["masked_mean", "train_anywhere"])
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    load_before = os.getloadavg()
    confine = confine_times(20)
    confine_shared = confine_times(20, daemons_network=True)
    confine_job = confine_job_times(20)
    forks = {how: fork_times(20, how) for how in ("plain", "handler", "contained")}
    daemons = {mode: Path(tempfile.mkdtemp(prefix="devcourse-bench-")) for mode in ("on", "off")}
    try:
        rows = [(name, warm_check_times(course.get(name), daemons, args.runs)) for name in args.exercises]
    finally:
        for mode, where in daemons.items():
            os.environ[sandbox.OFF_VARIABLE] = mode
            daemon.stop(where)
    load_after = os.getloadavg()
    ms = lambda xs: f"{1000 * statistics.median(xs):.0f}"  # noqa: E731
    ms_ = lambda xs: f"{1000 * statistics.median(xs):.1f}"  # noqa: E731
    mx_ = lambda xs: f"{1000 * max(xs):.1f}"  # noqa: E731
    lines = [
        "# What confining a grading costs",
        "",
        f"Machine: {platform.node()}, {os.cpu_count()} cores ({platform.machine()}), Linux {platform.release()}, "
        f"Python {platform.python_version()}; {sandbox.status().how}. The machine was shared with other "
        "engineers' test runs while this ran: compare the columns of one row, not the rows with other files.",
        "",
        f"`confine()` in a fresh fork (ruleset, rules for /, the private folder, /dev files, restrict_self, the "
        f"audit hook), 20 runs: median {1e6 * statistics.median(confine_shared):.0f} µs, max "
        f"{1e6 * max(confine_shared):.0f} µs forked from a process in a network namespace with nothing up, as "
        f"a daemon's workers are; median {1e6 * statistics.median(confine):.0f} µs, max {1e6 * max(confine):.0f} "
        f"µs where it makes a network namespace of its own. `confine_job()` after it (the read allow-list's "
        f"layer, the private folder given to nobody, the drop of privileges), 20 runs: median "
        f"{1e6 * statistics.median(confine_job):.0f} µs, max {1e6 * max(confine_job):.0f} µs.",
        "",
        f"A grading process forked by a handler and ended, until the handler has its status (a process with "
        f"torch imported, 20 runs): a plain fork median {ms_(forks['plain'])} ms (max {mx_(forks['plain'])}); in "
        f"a PID namespace of its own under a keeper, the handler unsharing it (a worker's: two forks and the "
        f"keeper's report) median {ms_(forks['handler'])} ms (max {mx_(forks['handler'])}); through an "
        f"intermediate (a batch's answer: three forks) median {ms_(forks['contained'])} ms (max "
        f"{mx_(forks['contained'])}).",
        "",
        f"A warm check of the exercise's solution (`runner.grade`, every leg: the real legs and the simulated "
        f"device in two workers at once), {args.runs} runs each, isolated and not in alternation (each first "
        "half of the time), two warm daemons:",
        "",
        "| exercise | isolated: median (ms) | max (ms) | not isolated: median (ms) | max (ms) "
        "| difference of medians (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, t in rows:
        diff = 1000 * (statistics.median(t["on"]) - statistics.median(t["off"]))
        lines.append(f"| {name} | {ms(t['on'])} | {1000 * max(t['on']):.0f} | {ms(t['off'])} | "
                     f"{1000 * max(t['off']):.0f} | {diff:+.0f} |")
    lines += [
        "",
        f"Load average (1 / 5 / 15 min): before {' / '.join(f'{x:.2f}' for x in load_before)}; after "
        f"{' / '.join(f'{x:.2f}' for x in load_after)}.",
        "",
        "Reproduce: `python benchmarks/isolation_cost.py --runs 10 --out benchmarks/results/isolation_cost.md`",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
