"""How long the project's own test suite takes, and where its time goes: `make test` (every behaviour once,
what CI runs) or `make test-all` (with the sweeps and repeats marked `exhaustive`).

Runs the suite as the Makefile does (TEST_JOBS processes, a file's tests together) with pytest's durations,
and prints a Markdown table: the wall time, the outcome line, and the test files that took longest (the sum of
their tests' setup, call and teardown, in whichever process ran them). Where the machine lets it (cgroup v1's
cpuacct, as root), the CPU time of the run and of every process it started (the grading daemons included) too.

    python benchmarks/suite_time.py [--all] [--jobs 2] [--out FILE] [PATH ...]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
DURATION = re.compile(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::", re.M)


def cpu_group() -> Path | None:
    """A cpuacct group of this run's own, which every process it starts stays in; None where there is none."""
    group = CPUACCT / f"devcourse-suite-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="make test-all's suite (default: make test's)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("TEST_JOBS", 2)))
    parser.add_argument("--out", type=Path)
    parser.add_argument("paths", nargs="*", help="test files or folders (default: all of tests/)")
    args = parser.parse_args()

    group = cpu_group()
    command = [sys.executable, "-m", "pytest", "-n", str(args.jobs), "--dist", "loadfile", "-q",
               "-p", "no:cacheprovider", "--durations=0", *([] if args.all else ["-m", "not exhaustive"]), *args.paths]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    cpu = int((group / "cpuacct.usage").read_text()) / 1e9 if group else None

    per_file = collections.Counter()
    for seconds, path in DURATION.findall(done.stdout):
        per_file[path] += float(seconds)
    outcome = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"exit status {done.returncode}"
    lines = [f"# `make {'test-all' if args.all else 'test'}`: {wall:.0f} s wall", "",
             f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, {args.jobs} test processes. Outcome: {outcome.strip('= ')}.",
             "" if cpu is None else f"CPU time of the run and every process it started: {cpu:.0f} s.", "",
             "| test file | seconds (setup + call + teardown) |", "| --- | ---: |"]
    lines += [f"| `{path}` | {seconds:.1f} |" for path, seconds in per_file.most_common(20)]
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)
    if group:
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        try:
            group.rmdir()
        except OSError:  # a grading daemon of the run still ends (they stop when idle)
            pass
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
