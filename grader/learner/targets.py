"""What a `devcourse` command names: an exercise, and for `check` the file to grade.

Kept apart from grader.cli (and free of rich) so that grader.launch can start a check's grading before the
tool's own imports."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from grader.learner import workspace
from grader.engine import daemon, legs, runner
from grader.catalog import course
from grader.learner.progress import Progress


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
    """The file `devcourse check` grades: FILE, the solution (--solution), or the learner's copy. A notebook
    with a `%%exercise NAME` cell for the exercise is graded by that cell alone (the course's notebooks also
    hold a set-up cell and the other exercises' cells): its code is saved under the state folder first."""
    if not args.file:
        return ex.solution_file if args.solution else workspace.exercise_file(ex)
    file = Path(args.file)
    if file.suffix == ".ipynb" and file.is_file():
        source = exercise_cell(file, ex.name)
        if source is not None:
            return _saved_cell(ex, file, source)
    return file


def exercise_cell(notebook: Path, name: str) -> str | None:
    """The code of the notebook's `%%exercise NAME` cell, with its first line commented out (so that line
    numbers are the cell's own); None when it has none. A ValueError when the notebook cannot be read."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"{workspace.shown(notebook)} cannot be read as a notebook: {exc}") from None
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        first, _, rest = source.partition("\n")
        if first.split() == ["%%exercise", name]:
            return f"# {first.strip()} (from {notebook.name})\n{rest}"
    return None


def _saved_cell(ex: course.Exercise, notebook: Path, source: str) -> Path:
    path = workspace.state_dir() / "checked" / f"{notebook.stem}.{ex.name}.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != source:  # the early start may have saved it
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return path


def shown_target(ex: course.Exercise, args: argparse.Namespace, file: Path) -> str:
    """How the report names what was graded."""
    if args.file and file != Path(args.file):
        return f"the %%exercise cell of {ex.name} in {workspace.shown(Path(args.file))}"
    return workspace.shown(file)


def with_timeout(ex: course.Exercise, timeout: float | None) -> course.Exercise:
    return dataclasses.replace(ex, timeout=timeout) if timeout else ex


def missing_file_message(ex: course.Exercise, file: Path) -> str:
    text = f"{workspace.shown(file)} does not exist."
    if file == workspace.exercise_file(ex):
        text += f" `devcourse reset {ex.name}` restores the exercise as shipped."
    return text


def grade(ex: course.Exercise, file: Path, device: str | None = None, timeout: float | None = None) -> runner.Grade:
    ex = with_timeout(ex, timeout)
    try:
        return runner.grade(ex, file, device=device)
    except (legs.LegError, daemon.DaemonError) as exc:
        raise UsageError(str(exc)) from None
