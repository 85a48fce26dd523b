"""What a `devcourse` command names: an exercise, and for `check` the file to grade.

Kept apart from grader.cli (and free of rich) so that grader.launch can start a check's grading before the
tool's own imports."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from grader import course, workspace
from grader.progress import Progress


class UsageError(Exception):
    """Something the learner typed cannot be done; the message says why (exit status 2)."""


def exercise(name: str | None, prog: Progress | None = None) -> course.Exercise:
    """The exercise NAME (also accepted: its file's path), or the current one when NAME is None."""
    if name is None:
        nxt = (prog or Progress.load()).next_exercise()
        if nxt is None:
            raise UsageError("every exercise is done or skipped: name one (devcourse list shows them all).")
        return nxt
    if name.endswith(".py"):
        for ex in course.load():
            if Path(name).resolve() == workspace.exercise_file(ex).resolve() or name.endswith(ex.path):
                return ex
    try:
        return course.get(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def add_check_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("name", nargs="?", help="the exercise (default: the current one: devcourse list shows it)")
    c.add_argument("file", nargs="?", help="grade this file instead of exercises/<path> (.py or .ipynb)")
    c.add_argument("--all", action="store_true", help="grade every exercise")
    c.add_argument("--solution", action="store_true", help="grade the reference solution")
    c.add_argument("--device", help="one process's legs: real, cpu, cuda, cuda:N, mps, or sim")
    c.add_argument("--timeout", type=float, help="seconds allowed per check (default: the exercise's)")
    c.add_argument("--json", action="store_true", help="print machine-readable JSON")


def check_file(ex: course.Exercise, args: argparse.Namespace) -> Path:
    """The file `devcourse check` grades: FILE, the solution (--solution), or the learner's copy."""
    return Path(args.file) if args.file else (ex.solution_file if args.solution else workspace.exercise_file(ex))


def with_timeout(ex: course.Exercise, timeout: float | None) -> course.Exercise:
    return dataclasses.replace(ex, timeout=timeout) if timeout else ex
