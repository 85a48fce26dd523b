"""What the run-time guard's audit hook (grader/guard/audit_hooks.py) costs a check.

Grades every exercise's reference fix in one process, in-process as a grading worker does (pytest.main with the
grader's plugin, on the CPU), first once to warm up, then `--rounds` times; in one process the hook is installed
(as in every grading worker), in the other `guard.install` does nothing. The two processes alternate, so a busy
machine slows both alike. Prints the CPU time per check of each and the difference, as a Markdown table;
`--out FILE` also writes it there. No isolation, no daemon: only the hook differs.

    python benchmarks/guard_cost.py --out benchmarks/results/guard_cost.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _one_process(with_hook: bool, rounds: int) -> dict:
    """Run in a child: grade every solution `rounds` times; CPU seconds per check, per round."""
    sys.path.insert(0, str(ROOT))
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest
    import pytest_timeout

    from grader.engine import grading_process, plugin, workers
    from grader.guard import audit_hooks as guard
    from grader.catalog import course

    if not with_hook:
        guard.install = lambda: None
    events = {}  # the guard's events raised while the checks run, by name (counted in the process without it)
    if not with_hook:
        watched = set(guard._RULES)

        def count(event, args, _watched=watched, _events=events):
            if event in _watched:
                _events[event] = _events.get(event, 0) + 1

        sys.addaudithook(count)
    plugin._exit = lambda code: None  # a tainted run would end this process
    # This driver's own frames are not the grader's (benchmarks/ is not an installed path): what the plugin holds
    # is set here without asking whether learner code is on the stack, as no learner code runs in this process.
    plugin._hold.__kwdefaults__ = {"_learner": lambda: False}
    exercises = course.load()

    class Count:
        checks = 0

        def pytest_runtest_logreport(self, report):
            if report.when == "call":
                Count.checks += 1

    def grade_all() -> tuple[float, int]:
        Count.checks = 0
        start = time.process_time()
        for ex in exercises:
            job = {"grader": str(ex.grader_file), "submission": str(ex.solution_file), "spec": "cpu",
                   "timeout": ex.timeout}
            pytest.main(grading_process._pytest_args(job), plugins=[plugin, pytest_timeout, Count()])
        return time.process_time() - start, Count.checks

    grade_all()  # warm: first imports, torch's first calls
    per_check = []
    events.clear()
    for _ in range(rounds):
        seconds, checks = grade_all()
        per_check.append(seconds / max(checks, 1))
    return {"per_check": per_check, "checks": checks,
            "events": {k: v / (rounds * max(checks, 1)) for k, v in events.items()},
            "event_us": _event_cost(with_hook)}


def _event_cost(with_hook: bool) -> float:
    """Microseconds per `object.__getattr__` event (a function's __code__ read: the commonest the guard sees, and
    its cheapest rule), with the guard installed or not."""
    def f():
        pass

    start, n = time.perf_counter(), 200000
    for _ in range(n):
        f.__code__
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--child", choices=("on", "off"))
    args = p.parse_args()
    if args.child:
        print(json.dumps(_one_process(args.child == "on", args.rounds)))
        return
    runs = {"on": [], "off": []}
    checks, events, event_us = 0, {}, {"on": [], "off": []}
    for order in (("off", "on"), ("on", "off")):
        for which in order:
            out = subprocess.run([sys.executable, __file__, "--child", which, "--rounds", str(args.rounds)],
                                 capture_output=True, text=True, cwd=ROOT, check=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            runs[which] += result["per_check"]
            checks = result["checks"]
            events = result["events"] or events
            event_us[which].append(result["event_us"])
    on, off = statistics.median(runs["on"]), statistics.median(runs["off"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = "\n".join([
        f"The run-time guard's cost: {platform.node() or 'this machine'}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}, load average {load:.1f} at the end; every "
        f"exercise's reference fix graded in-process on the CPU ({checks} checks a round), "
        f"{len(runs['on'])} rounds each way, two processes each way, alternating.",
        "",
        "| | CPU ms per check (median) | rounds |",
        "| --- | ---: | --- |",
        f"| without the audit hook | {off * 1000:.1f} | {', '.join(f'{x * 1000:.1f}' for x in runs['off'])} |",
        f"| with the audit hook | {on * 1000:.1f} | {', '.join(f'{x * 1000:.1f}' for x in runs['on'])} |",
        f"| difference | {(on - off) * 1000:+.1f} ({(on / off - 1) * 100:+.1f} %) | |",
        "",
        "The guard's events per check (counted without it), most frequent first: "
        + ", ".join(f"{name} {n:.1f}" for name, n in sorted(events.items(), key=lambda kv: -kv[1])) + ".",
        "",
        f"One `object.__getattr__` event (a `__code__` read) costs {statistics.median(event_us['off']):.2f} us "
        f"without the hook and {statistics.median(event_us['on']):.2f} us with it.",
        "",
    ])
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
