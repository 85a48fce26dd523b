"""Grade one submission: run its hidden grader over every applicable device leg and collect the results.

The real legs run in one pytest process, the simulated accelerator in a second (its registration is
process-wide), both at once. Each process is bounded in time; a crash or a hang of the learner's code
becomes a failed check with an explanation, never an exception here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader import ROOT, legs
from grader.course import Exercise


@dataclass(frozen=True)
class CheckResult:
    check: str
    leg: str
    outcome: str  # passed, failed, skipped
    message: str = ""


@dataclass
class Grade:
    exercise: Exercise
    submission: Path
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ran(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome != "skipped"]

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome == "failed"]

    @property
    def passed(self) -> bool:
        return bool(self.ran) and not self.failures

    def legs(self) -> list[str]:
        return sorted({r.leg for r in self.ran})

    def passed_on(self, leg: str) -> bool:
        on_leg = [r for r in self.ran if r.leg == leg]
        return bool(on_leg) and all(r.outcome == "passed" for r in on_leg)


def process_specs(exercise: Exercise, device: str | None = None) -> list[str]:
    """The --device value of each grading process for this exercise on this machine."""
    if device is not None:
        return [device]
    real = [leg for leg in legs.real_legs() if legs.family(leg) in exercise.legs]
    specs = [",".join(real)] if real else []
    if "accelerator" in exercise.legs:
        specs.append("sim")
    return specs


def _command(exercise: Exercise, submission: Path, spec: str, report: Path) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(exercise.grader_file),
        "-p", "grader.plugin", "-p", "pytest_timeout", "-p", "no:cacheprovider",
        f"--timeout={exercise.timeout}",  # pytest-timeout interrupts with a signal where the OS has one
        "--submission", str(submission), "--device", spec, "--grade-report", str(report),
        "-q", "--no-header", "-o", "addopts=",
    ]


def _read_report(path: Path) -> tuple[int | None, list[CheckResult]]:
    """(number of checks collected, results so far) from a grading process's report."""
    if not path.exists():
        return None, []
    collected, results = None, []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if "collected" in r:
            collected = r["collected"]
        else:
            results.append(CheckResult(r["check"], r["leg"] or "-", r["outcome"], r["message"]))
    return collected, results


def _process_limit(exercise: Exercise) -> int:
    # Each check is bounded by pytest-timeout; this backstop catches what a signal cannot interrupt.
    return 120 + 10 * exercise.timeout


def grade(exercise: Exercise, submission: Path, device: str | None = None) -> Grade:
    submission = Path(submission).resolve()
    result = Grade(exercise, submission)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryDirectory(prefix="devcourse-") as tmp:
        running = []
        for i, spec in enumerate(process_specs(exercise, device)):
            report = Path(tmp) / f"report-{i}.jsonl"
            proc = subprocess.Popen(
                _command(exercise, submission, spec, report), cwd=tmp, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            running.append((spec, proc, report))
        for spec, proc, report in running:
            result.results += _finish(exercise, spec, proc, report)
    return result


def _finish(exercise: Exercise, spec: str, proc: subprocess.Popen, report: Path) -> list[CheckResult]:
    """Wait for one grading process; its results, plus a failure that says why if it did not end well."""
    limit = _process_limit(exercise)
    try:
        output, _ = proc.communicate(timeout=limit)
        problem = None
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        problem = f"the grader stopped your code after {limit} s (it never finished)"
    collected, got = _read_report(report)
    finished = len({(r.check, r.leg) for r in got})
    if problem is None and proc.returncode in (0, 1) and collected and finished < collected:
        problem = f"your code ended the grading process after {finished} of {collected} checks (does it call exit()?)"
    elif problem is None and (proc.returncode not in (0, 1) or collected is None):
        problem = _crash_message(proc.returncode, output)
    if problem is not None:
        got.append(CheckResult("(grader process)", spec, "failed", problem))
    return got


def _crash_message(code: int, output: str) -> str:
    if code < 0:
        return f"the process running your code was killed by signal {-code} (a crash in native code?)"
    tail = "\n".join(output.strip().splitlines()[-5:])
    return f"the grader could not run (exit code {code}):\n{tail}"
