"""Helpers for the tests that use the course as a learner would: the real `devcourse` console script, run in
a subprocess inside a temporary copy of the course folder (the real exercises/ are never written)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader import ROOT
from grader.catalog import course

DEVCOURSE = Path(sys.executable).parent / "devcourse"
BOX_CHARACTERS = set("─│╭╮╰╯┌┐└┘├┤┬┴┼━╺")


def make_course_copy(tmp: Path) -> Path:
    """A learner's folder: course.toml and exercises/, as shipped."""
    folder = tmp / "course"
    folder.mkdir()
    shutil.copy(ROOT / "course.toml", folder / "course.toml")
    shutil.copytree(ROOT / "exercises", folder / "exercises")
    return folder


def learner_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DEVCOURSE_STATE_DIR", "DEVCOURSE_HOME")}
    env.update(COLUMNS="120", PYTHONIOENCODING="utf-8", **extra)  # the daemon folder stays the suite's own
    return env


def devcourse(folder: Path, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(DEVCOURSE), *args], cwd=folder, env=learner_env(), input=input, text=True,
                          capture_output=True, timeout=timeout)


def exercise_file(folder: Path, name: str) -> Path:
    return folder / "exercises" / course.get(name).path


def fix(folder: Path, name: str) -> None:
    shutil.copy(course.get(name).solution_file, exercise_file(folder, name))


def summary_rows(stdout: str) -> list[list[str]]:
    """The rows of `check --all`'s plain table, [number, name, cell..., result], after checking that each row's
    result agrees with its cells and the count line with the rows."""
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in stdout.splitlines()
            if re.match(r"\| +\d+ \| \w+ +\|", ln)]
    for row in rows:
        cells, result = row[2:-1], row[-1]
        assert ("FAIL" in cells) <= (result != "passed"), row
        assert result != "0 failed", row
    passing = sum(row[-1] == "passed" for row in rows)
    assert f"{passing} of {len(rows)} exercises pass." in stdout
    return rows
