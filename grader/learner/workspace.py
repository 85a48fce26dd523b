"""Where the learner's things are: their exercise files, their progress, the shipped versions of the files.

* The **learner's folder** is the nearest folder, from the working directory up, that holds `course.toml` next
  to `exercises/` (a clone of the course; `devcourse` works from any folder inside it); `DEVCOURSE_HOME`
  chooses one explicitly. The `devcourse` commands refuse to run outside one, saying what a course folder is
  (`require_course_folder`): a second clone must never write to the first one's files. The notebook commands
  fall back to the course's own folder (`grader.ROOT`), as on Colab, whose working directory is not the
  clone. The learner edits
  `<folder>/exercises/<path>`; graders, solutions and `course.toml` are always the course's own.
* The **state folder** is `<folder>/.devcourse/` (`DEVCOURSE_STATE_DIR` chooses another): `progress.json`
  and its lock, `progress.json.lock` (grader.learner.progress), and, from notebooks, the code of each exercise cell (`notebook/<name>.py`). It is in
  `.gitignore`; deleting it starts the course afresh.
* The **shipped version** of each exercise file, which `devcourse reset` restores, is a copy inside the
  package (`grader/shipped_exercises.json`), written with the notebooks by `python -m grader.authoring.notebooks` and
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
from grader.catalog.course import Exercise

SHIPPED_FILE = Path(__file__).resolve().parent.parent / "shipped_exercises.json"  # in grader/


CLONE_URL = "https://github.com/device-course/device-course.git"


class NoCourseFolder(Exception):
    """A `devcourse` command was run outside a course folder; the message says what one is and how to get there."""


def is_course_folder(folder: Path) -> bool:
    return (folder / "course.toml").is_file() and (folder / "exercises").is_dir()


def find_course_folder() -> Path | None:
    """DEVCOURSE_HOME, or the nearest course folder from the working directory up; None when there is none."""
    chosen = os.environ.get("DEVCOURSE_HOME")
    if chosen:
        return Path(chosen).resolve()
    here = Path.cwd().resolve()
    return next((folder for folder in (here, *here.parents) if is_course_folder(folder)), None)


def require_course_folder() -> Path:
    """The learner's folder, or NoCourseFolder saying what a course folder is and how to reach one."""
    folder = find_course_folder()
    if folder is not None and is_course_folder(folder):
        return folder
    what = ("devcourse works in a course folder: your copy of the course, the folder that holds course.toml "
            "and exercises/ (or any folder inside it). ")
    if folder is not None:  # DEVCOURSE_HOME names a folder that is not one
        raise NoCourseFolder(f"DEVCOURSE_HOME is {folder}, which is not a course folder. {what}"
                             "Set DEVCOURSE_HOME to your course folder, or unset it and cd into the folder.")
    here = Path.cwd().resolve()
    lacking = next((f for f in (here, *here.parents) if (f / "exercises").is_dir()), None)
    if lacking is not None:
        raise NoCourseFolder(f"{lacking} has exercises/ but no course.toml. {what}Restore course.toml (in a git "
                             "clone: git checkout course.toml), or get a fresh copy of the course: "
                             f"git clone {CLONE_URL}")
    raise NoCourseFolder(f"{here} is not inside a course folder. {what}cd into your course folder, or get one "
                         f"with: git clone {CLONE_URL} && cd device-course")


def root() -> Path:
    """The learner's folder: the course folder found from here, else the course's own folder (notebooks)."""
    return find_course_folder() or ROOT


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
                          "(authors) run python -m grader.authoring.notebooks") from None


def edited(ex: Exercise) -> bool:
    """Whether the learner's file for `ex` differs from the shipped one (True when either cannot be read)."""
    try:
        return exercise_file(ex).read_text(encoding="utf-8") != shipped_source(ex)
    except (OSError, UnicodeDecodeError, LookupError):
        return True


def shipped_table() -> dict[str, str]:
    """Every shipped exercise file, as the course's exercises/ folder holds it now (for the generator)."""
    from grader.catalog import course

    return {ex.path: ex.exercise_file.read_text(encoding="utf-8") for ex in course.load()}
