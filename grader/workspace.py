"""Where the learner's things are: their exercise files, their progress, the shipped versions of the files.

* The **learner's folder** is the nearest folder, from the working directory up, that holds `course.toml` next
  to `exercises/` (a clone of the course; `devcourse` works from any folder inside it); `DEVCOURSE_HOME`
  chooses one explicitly; otherwise the course's own folder (`grader.ROOT`). The learner edits
  `<folder>/exercises/<path>`; graders, solutions and `course.toml` are always the course's own.
* The **state folder** is `<folder>/.devcourse/` (`DEVCOURSE_STATE_DIR` chooses another): `progress.json`
  (grader.progress) and, from notebooks, the code of each exercise cell (`notebook/<name>.py`). It is in
  `.gitignore`; deleting it starts the course afresh.
* The **shipped version** of each exercise file, which `devcourse reset` restores, is a copy inside the
  package (`grader/shipped_exercises.json`), written with the notebooks by `python -m grader.notebooks` and
  kept equal to `exercises/` by tests/test_notebooks.py. Neither git (a learner may commit their own
  changes, or not use git at all) nor a snapshot at first run (the learner may have edited a file before)
  would be reliable, and the copy travels with the package wherever it is installed.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from grader import ROOT
from grader.course import Exercise

SHIPPED_FILE = Path(__file__).resolve().parent / "shipped_exercises.json"


def root() -> Path:
    """The learner's folder."""
    chosen = os.environ.get("DEVCOURSE_HOME")
    if chosen:
        return Path(chosen).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "course.toml").is_file() and (folder / "exercises").is_dir():
            return folder
    return ROOT


def state_dir() -> Path:
    chosen = os.environ.get("DEVCOURSE_STATE_DIR")
    return Path(chosen).resolve() if chosen else root() / ".devcourse"


def exercise_file(ex: Exercise) -> Path:
    """The file the learner edits for this exercise."""
    return root() / "exercises" / ex.path


def notebook_file(ex: Exercise) -> Path:
    """Where a notebook's exercise cell saves its code for the grader."""
    return state_dir() / "notebook" / f"{ex.name}.py"


def shown(path: Path) -> str:
    """A path as the learner would type it: relative to the working directory when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@cache
def _shipped() -> dict[str, str]:
    return json.loads(SHIPPED_FILE.read_text(encoding="utf-8"))


def shipped_source(ex: Exercise) -> str:
    """The exercise file as the course ships it (with its bug)."""
    try:
        return _shipped()[ex.path]
    except (FileNotFoundError, KeyError):
        raise LookupError(f"the package has no shipped copy of exercises/{ex.path}: reinstall the course, or "
                          "(authors) run python -m grader.notebooks") from None


def shipped_table() -> dict[str, str]:
    """Every shipped exercise file, as the course's exercises/ folder holds it now (for the generator)."""
    from grader import course

    return {ex.path: ex.exercise_file.read_text(encoding="utf-8") for ex in course.load()}
