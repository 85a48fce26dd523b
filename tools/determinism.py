"""Grade every submission of the course several times and list each check whose outcome changed between runs.

A grader draws its inputs at random. A wrong submission that passes one of its checks on a lucky draw still
fails as a whole, but its messages change between runs, and in a class its partial credit does (the points
of an exercise are split over blocks of checks, grader/classroom/blocks.py). This is the audit for that:

    python tools/determinism.py --repeat 10 [--jobs 2] [--only masked_mean,worker_env]

It prints one line per (exercise, submission, check, leg) whose outcome was not the same in every run, with
how often it passed, and exits 1 if there is any. `devcourse dev check NAME` runs the same audit over fewer
runs (--repeat, 3 by default) with the rest of an exercise's checks.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from grader.engine import runner  # noqa: E402
from grader.catalog import course  # noqa: E402
from grader.authoring.submissions import changed_outcomes  # noqa: E402  (devcourse dev check's rule too)
from verdicts import own_daemon, submissions  # noqa: E402


def outcomes(items: list[tuple[str, str, str, int]]) -> list[tuple[tuple, str]]:
    """((exercise, submission, check, leg), outcome) of each check of each item, graded through a daemon of
    this process's own."""
    found = []
    with own_daemon():
        for name, label, path, _ in items:
            for r in runner.grade(course.get(name), Path(path)).results:
                found.append(((name, label, r.check, r.leg), r.outcome))
    return found


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    p.add_argument("--only", help="comma-separated exercise names")
    args = p.parse_args()
    only = set(args.only.split(",")) if args.only else None
    items = [(ex.name, label, str(path), run) for run in range(args.repeat) for ex in course.load()
             if only is None or ex.name in only for label, path in submissions(ex).items()]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        graded = pool.map(outcomes, [items[i::args.jobs] for i in range(args.jobs)])
    seen: dict[tuple, list[str]] = defaultdict(list)
    for key, outcome in (pair for chunk in graded for pair in chunk):
        seen[key].append(outcome)
    changing = changed_outcomes(seen, args.repeat)
    for (name, label, check, leg), runs in sorted(changing.items()):
        print(f"{name} {label} {check} [{leg}]: passed {runs.count('passed')} of {len(runs)} runs")
    print(f"{len(seen)} checks of {len(items) // args.repeat} submissions graded {args.repeat} times: "
          f"{len(changing)} changed between runs.")
    return 1 if changing else 0


if __name__ == "__main__":
    sys.exit(main())
