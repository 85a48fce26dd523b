"""`devcourse classroom generate DIR`: a complete nbgrader course folder from course.toml and _toc.yml.

    DIR/nbgrader_config.py                       the course's nbgrader configuration (edit it freely)
    DIR/exchange/                                nbgrader's exchange for a trial on one machine (the config's)
    DIR/source/<assignment>/<assignment>.ipynb    one assignment (one notebook) per part of the book, or per
                                                 chapter with per_chapter

Everything comes from the exercises as the course ships them (grader/shipped_exercises.json, the copies
`devcourse reset` restores), never from the working exercises/ folder, which an instructor may have edited
while trying the course: the released answer cells hold the shipped bug, and the points split
(grader.classroom.blocks) comes from grading each shipped program once, here.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import nbformat

from grader import ROOT
from grader.engine import runner
from grader.catalog import course
from grader.classroom import blocks, notebook, source

CONFIG = '''"""nbgrader configuration of the device-placement course, written by `devcourse classroom generate`.

Edit freely; the instructors' guide (book/instructors.md) explains each setting."""

import os

from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput,
                                    ComputeChecksums, IncludeHeaderFooter, InstantiateTests, LockCells, SaveCells)

from grader.classroom.release import ReleaseBrokenCode

c = get_config()  # noqa: F821 - provided by nbgrader
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
# nbgrader's exchange, where release_assignment puts an assignment, learners fetch it and submit, and collect
# finds the submissions: a folder of this course, for a trial on one machine (a learner's nbgrader commands,
# run elsewhere, name it with --Exchange.root). Without this line nbgrader uses a system-wide folder,
# /usr/local/share/nbgrader/exchange. On a JupyterHub, set one exchange for the whole hub instead, in a
# system-wide nbgrader_config.py, and remove this line (the instructors' guide says how).
c.Exchange.root = os.path.join(c.CourseDirectory.root, "exchange")
# A large course: a Postgres gradebook, e.g.
# c.CourseDirectory.db_url = "postgresql://nbgrader:PASSWORD@db-host/device_course"

# The released answer cells show the broken program (not nbgrader's "YOUR CODE HERE" stub): nbgrader's own
# pipeline, with ClearSolutions replaced by its subclass ReleaseBrokenCode.
c.GenerateAssignment.preprocessors = [
    IncludeHeaderFooter, InstantiateTests, LockCells, ReleaseBrokenCode, ClearOutput, CheckCellMetadata,
    ComputeChecksums, SaveCells, ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata,
]

# Grade with `devcourse classroom autograde`: it grades the answer cells with the course's grading engine and
# never runs a submitted notebook. Stock `nbgrader autograde` runs each notebook, in a kernel the submission
# controls, and stays possible for comparison only: a test cell grades on every device leg, the first one
# may start the warm grading processes, and an endless loop in an answer takes the exercise's time limit
# per check, so give a cell room for that.
c.Execute.timeout = {timeout}
'''


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def parts(toc_file: Path = ROOT / "_toc.yml") -> list[tuple[str, list[str]]]:
    """[(caption, [chapter...])] in book order."""
    return course.book_parts(toc_file)


def assignments(per_chapter: bool = False, only: list[str] | None = None) -> list[tuple[str, str, list]]:
    """[(assignment id, title, [(chapter, [Exercise...])...])] for the exercises chosen."""
    chosen = [e for e in course.load() if not only or e.name in only]
    if only:
        unknown = set(only) - {e.name for e in chosen}
        if unknown:
            raise KeyError(f"no exercise named {', '.join(sorted(unknown))}")
    by_chapter: dict[str, list] = {}
    for e in chosen:
        by_chapter.setdefault(e.chapter, []).append(e)
    out = []
    for number, (caption, chapters) in enumerate(parts(), start=1):
        groups = [(ch, by_chapter.pop(ch)) for ch in chapters if ch in by_chapter]
        if not groups:
            continue
        if per_chapter:
            out += [(ch, f"{caption}: {ch.replace('-', ' ')}", [(ch, exs)]) for ch, exs in groups]
        else:
            out.append((f"part{number}-{slug(caption)}", caption, groups))
    if by_chapter:
        raise ValueError(f"chapters not in _toc.yml: {sorted(by_chapter)}")
    return out


def split_points(exercises) -> dict[str, list[blocks.Block]]:
    """Grade each shipped exercise (the package's copy) once and split its points into blocks."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="devcourse-shipped-") as folder:
        for e in exercises:
            shipped = Path(folder) / f"{e.name}.py"
            shipped.write_text(source.shipped_text(e), encoding="utf-8")
            out[e.name] = blocks.split(e, runner.grade(e, shipped).results)
    return out


def generate(folder: Path, per_chapter: bool = False, only: list[str] | None = None, course_id: str = "device-course",
             timeout: int = 180, progress=None) -> list[Path]:
    """Write the course folder; the notebooks written."""
    folder = Path(folder)
    plan = assignments(per_chapter, only)
    exercises = [e for _, _, groups in plan for _, exs in groups for e in exs]
    split = split_points(exercises)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(CONFIG.format(course_id=course_id, timeout=timeout), encoding="utf-8")
    (folder / "exchange").mkdir(exist_ok=True)  # nbgrader's exchange must exist before release_assignment
    written = []
    for assignment, title, groups in plan:
        path = folder / "source" / assignment / f"{assignment}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook.build(title, groups, split), path)
        written.append(path)
        if progress:
            progress(path)
    return written
