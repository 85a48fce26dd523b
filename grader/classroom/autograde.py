"""`devcourse classroom autograde ASSIGNMENT`: a class's submissions graded by the grading engine, scores in
nbgrader's gradebook.

Each submission goes through nbgrader's own Autograde converter (through NbGraderAPI, as `nbgrader autograde
ASSIGNMENT --student ID` would: the same sanitizing, the same gradebook writes, timestamps, late penalties,
"No response." comments and autograded notebook), with one step replaced: where stock autograde executes
the notebook in a kernel, grader.classroom.engine_grading.GradeAnswers grades the answer cells with the
engine and writes each test cell's verdict as its output. The student's notebook never runs, so a cell it
adds, an input transformer or a helper it redefines changes nothing; a test cell it edits or deletes is
restored from the gradebook first (engine_grading.RestoreCells).

Where the time goes: the engine's gradings (grader.classroom.answers: each distinct answer once, the answers
of an exercise in batches, several at once, in the host's warm grading processes), and nbgrader's converter
for each submission (mostly its gradebook reads and writes); this process starts every grading before it runs
the first converter, then runs the converters one after another while the gradings go on.

On a cluster: `--scheduler ADDRESS` sends one task per submission to a running Dask scheduler (e.g.
dask-jobqueue's SLURMCluster on GPU nodes; the course folder must be at the same path on every worker); each
task grades through its node's warm grading processes.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import nbformat

SQLITE_BUSY_SECONDS = 120
#: nbgrader's sanitizing steps, with OverwriteCells' subclass that puts back every deleted test cell and
#: CheckCellMetadata's that builds the metadata schema's validator once (grader.classroom.metadata).
SANITIZE_STEPS = [
    "nbgrader.preprocessors.ClearOutput", "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec", "grader.classroom.engine_grading.RestoreCells",
    "grader.classroom.metadata.CheckCellMetadataOnce",
]
#: nbgrader's autograde pipeline with the notebook's execution replaced by the engine's grading.
AUTOGRADE_STEPS = [
    "grader.classroom.engine_grading.GradeAnswers", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades", "nbgrader.preprocessors.AssignLatePenalties",
    "grader.classroom.metadata.CheckCellMetadataOnce",
]


def load_config(root: Path):
    from traitlets.config.loader import PyFileConfigLoader

    config_file = Path(root) / "nbgrader_config.py"
    if config_file.is_file():
        return PyFileConfigLoader(config_file.name, path=str(root)).load_config()
    from traitlets.config import Config

    return Config()


def _api(root: Path):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = load_config(root)
    config.CourseDirectory.root = str(root)
    config.Autograde.sanitize_preprocessors = SANITIZE_STEPS
    config.Autograde.autograde_preprocessors = AUTOGRADE_STEPS
    config.RestoreCells.add_missing_cells = True  # a deleted test cell is graded all the same
    coursedir = CourseDirectory(config=config)
    url = coursedir.db_url
    if url.startswith("sqlite:") and "timeout=" not in url:  # concurrent writers (a cluster) wait, not fail
        coursedir.db_url = url + ("&" if "?" in url else "?") + f"timeout={SQLITE_BUSY_SECONDS}"
    return NbGraderAPI(coursedir=coursedir, config=config), coursedir


def submitted_students(root: Path, assignment: str) -> list[str]:
    _, coursedir = _api(root)
    folder = Path(coursedir.root) / coursedir.submitted_directory
    return sorted(p.parent.name for p in folder.glob(f"*/{assignment}") if p.is_dir())


def create_students(root: Path, students: list[str]) -> None:
    from nbgrader.api import Gradebook

    _, coursedir = _api(root)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        for s in students:
            gb.update_or_create_student(s)


def start_gradings(root: Path, assignment: str, students: list[str], grades) -> list:
    """Start grading every answer of every submission now; their futures. Only a head start: the converter
    grades what its sanitized notebook holds, through the same `grades` (an answer not started here is graded
    then)."""
    from nbgrader.api import Gradebook, MissingEntry

    from grader.classroom import engine_grading

    _, coursedir = _api(root)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            notebooks = [n.name for n in gb.find_assignment(assignment).notebooks]
        except MissingEntry:
            return []  # the converter says what is wrong
    names = {n: {e for e, _ in engine_grading.test_cells(coursedir.db_url, n, assignment).values() if e}
             for n in notebooks}
    found = []
    for student in students:
        for notebook, exercises in names.items():
            path = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment)) / f"{notebook}.ipynb"
            try:
                answers = engine_grading.answer_cells(nbformat.read(path, as_version=4))
            except (OSError, ValueError):
                continue
            found += [(name, answers[name]) for name in sorted(exercises & answers.keys())]
    return grades.submit_all(found)  # all at once: the answers of one exercise are graded in batches


def needs_autograding(root: Path, assignment: str, student: str) -> bool:
    """Whether nbgrader's converter, without --force, would autograde the submission (its rule: a notebook
    not autograded yet, or a submission newer than its autograded copy); the engine grades only those."""
    _, coursedir = _api(root)
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    autograded = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
    if any(not (autograded / nb.name).is_file() for nb in submitted.glob("*.ipynb")):
        return True
    new, old = coursedir.get_existing_timestamp(str(submitted)), coursedir.get_existing_timestamp(str(autograded))
    return new is not None and old is not None and new > old


def autograde_one(root: str, assignment: str, student: str, force: bool = True) -> dict:
    """One submission: nbgrader's Autograde converter, with the engine's grading in place of the kernel."""
    start = time.monotonic()
    api, _ = _api(Path(root))
    result = api.autograde(assignment, student, force=force, create=True)
    return {"student": student, "success": bool(result.get("success")), "error": result.get("error", ""),
            "log": result.get("log", ""), "seconds": time.monotonic() - start}


def autograde(root: Path, assignment: str, students: list[str] | None = None, workers: int | None = None,
              scheduler: str | None = None, force: bool = True, progress: bool = True, console=None) -> list[dict]:
    """Grade every submission of `assignment` (or `students`); the results, in completion order. `workers`:
    answers in grading at once on this host (default: one more than the cores)."""
    from rich.console import Console

    from grader.engine import daemon
    from grader.classroom import answers, engine_grading

    root = Path(root).resolve()
    console = console or Console()
    students = students or submitted_students(root, assignment)
    if not students:
        raise FileNotFoundError(f"no submissions of {assignment} under {root / 'submitted'}")
    if not force:
        done = [s for s in students if not needs_autograding(root, assignment, s)]
        if done:
            console.print(f"Skipping {len(done)} submission(s) already autograded and not submitted again since "
                          f"(--no-force): {', '.join(done)}.")
        students = [s for s in students if s not in done]
        if not students:
            return []
    create_students(root, students)
    if scheduler:
        console.print(f"Grading {len(students)} submission(s) on the Dask cluster at {scheduler}.")
        with _dask(scheduler) as (submit, as_completed):
            futures = {submit(autograde_one, f"autograde-{assignment}-{s}", str(root), assignment, s, force): s
                       for s in students}
            return _show(_finished(futures, as_completed), len(students), assignment, console, progress)
    daemon.ensure()  # warm before the first grading
    with answers.ClassGrades(workers) as grades:
        engine_grading.SHARED = grades
        try:
            pending = start_gradings(root, assignment, students, grades)
            console.print(f"Grading {len(students)} submission(s) with the grading engine, no notebook run: "
                          f"{grades.distinct} distinct answer(s) among {grades.asked}, each graded once, "
                          f"in batches of up to {answers.BATCH_SIZE} per exercise, "
                          f"{workers or answers.default_jobs()} at once.")
            with _converters(len(students), pending) as convert:
                done = convert(autograde_one, [(str(root), assignment, s, force) for s in students])
                return _show(done, len(students), assignment, console, progress)
        finally:
            engine_grading.SHARED = None


@contextlib.contextmanager
def _converters(submissions: int, pending: list):
    """A way to run nbgrader's converter over the submissions: `convert(fn, argument tuples)` yields the results
    as they come. Where processes can fork (Linux), once every answer started here is graded, one process per
    core runs converters (they read and write the gradebook, which waits for a busy writer: SQLITE_BUSY_SECONDS),
    each with the grades already made; the converters were one core's work after the gradings ended. Elsewhere,
    or for one submission, this process runs them one after another while the gradings go on."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor, as_completed, wait

    processes = min(submissions, os.cpu_count() or 1)
    if processes < 2 or "fork" not in multiprocessing.get_all_start_methods() or not sys.platform.startswith("linux"):
        yield lambda fn, calls: (fn(*args) for args in calls)
        return
    wait(pending)  # the forks get these grades as made; an answer they lack, they grade themselves
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"),
                             initializer=_after_fork) as pool:
        yield lambda fn, calls: (f.result() for f in as_completed([pool.submit(fn, *args) for args in calls]))


def _after_fork() -> None:
    """In a converter process: its own threads and lock for the grades it may still have to make."""
    from grader.classroom import engine_grading

    if engine_grading.SHARED is not None:
        engine_grading.SHARED.after_fork()


def _finished(futures: dict, as_completed):
    """The results of a cluster's tasks as they finish; a task that died is a failed submission."""
    for fut in as_completed(futures):
        try:
            yield fut.result()
        except Exception as exc:  # noqa: BLE001 - report it, grade the rest
            yield {"student": futures[fut], "success": False, "log": "", "seconds": 0.0,
                   "error": f"the task failed: {type(exc).__name__}: {exc}"}


def _show(results, total: int, assignment: str, console, progress: bool) -> list[dict]:
    """Collect `results` (an iterator), with a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    out = []
    columns = (TextColumn("autograding {task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[last]}"))
    with Progress(*columns, console=console, disable=not progress) as bar:
        task = bar.add_task(assignment, total=total, last="")
        for r in results:
            out.append(r)
            mark = "✓" if r["success"] else "✗"
            bar.update(task, advance=1, last=f"{mark} {r['student']} ({r['seconds']:.1f} s)")
    return out


@contextlib.contextmanager
def _dask(scheduler: str):
    """(submit, as_completed) of the Dask cluster whose scheduler is at `scheduler`."""
    from dask.distributed import Client, as_completed

    with Client(scheduler) as client:
        yield (lambda fn, key, *args: client.submit(fn, *args, key=key, pure=False)), as_completed
