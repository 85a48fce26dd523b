"""`devcourse classroom autograde ASSIGNMENT`: nbgrader's autograde for a whole class, in parallel.

Each submission is one task that runs nbgrader's own Autograde converter (through NbGraderAPI, as
`nbgrader autograde ASSIGNMENT --student ID` would) in a worker process: the same preprocessors, the same
gradebook writes, so the gradebook ends as stock `nbgrader autograde` leaves it. The students are created
in the gradebook first, by this process, so that workers never race to create one. With SQLite, the
workers wait for each other's short writes (a busy timeout); a Postgres gradebook has no such limit.

Where the tasks run:

* on this machine (the default): a pool of worker processes from the standard library
  (concurrent.futures), one more than the cores, forked once nbgrader is imported here. Their notebooks'
  kernels are forked from a warm template (grader.classroom.warm_kernels). A Dask LocalCluster did the
  same job with 6 s of CPU to start and a tenth of a core to run, which a class on two cores pays in full
  (benchmarks/results/classroom_autograde.md);
* on a cluster: any running Dask scheduler (`--scheduler tcp://host:8786`, e.g. dask-jobqueue's
  SLURMCluster on GPU nodes; the course folder must then be at the same path on every worker).

The workers of one host grade through that host's warm grading processes (grader.daemon), which grade
several submissions at once; this command starts the local ones before the first task, and they end after
their idle minutes as a learner's do.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

SQLITE_BUSY_SECONDS = 120
# A kernel picks free TCP ports and binds them a moment later; two kernels started at once by two workers
# can pick the same one, and one dies at its start. Such a submission is graded again, once.
KERNEL_START_RACE = ("Address already in use", "Kernel died before replying to kernel_info")


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
    coursedir = CourseDirectory(config=config)
    url = coursedir.db_url
    if url.startswith("sqlite:") and "timeout=" not in url:  # concurrent writers wait instead of failing
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


def autograde_one(root: str, assignment: str, student: str, force: bool = True) -> dict:
    """One submission, in a worker process: nbgrader's Autograde converter via NbGraderAPI."""
    start = time.monotonic()
    os.chdir(root)
    api, _ = _api(Path(root))
    result = api.autograde(assignment, student, force=force, create=True)
    if not result.get("success") and any(sign in result.get("log", "") for sign in KERNEL_START_RACE):
        result = api.autograde(assignment, student, force=True, create=True)
    return {"student": student, "success": bool(result.get("success")), "error": result.get("error", ""),
            "log": result.get("log", ""), "seconds": time.monotonic() - start}


def autograde(root: Path, assignment: str, students: list[str] | None = None, workers: int | None = None,
              scheduler: str | None = None, force: bool = True, progress: bool = True, console=None) -> list[dict]:
    """Grade every submission of `assignment` (or `students`); the results, in completion order."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from grader import daemon

    root = Path(root).resolve()
    console = console or Console()
    students = students or submitted_students(root, assignment)
    if not students:
        raise FileNotFoundError(f"no submissions of {assignment} under {root / 'submitted'}")
    create_students(root, students)
    daemon.ensure()  # warm before the first task, instead of started by whichever worker comes first
    # A worker waits for its notebook's kernel part of the time: one more worker than cores keeps them busy
    # (benchmarks/results/classroom_autograde.md compares the counts).
    workers = workers or max(1, min(len(students), (os.cpu_count() or 1) + 1))
    if not scheduler:
        from grader.classroom import warm_kernels

        console.print(f"Grading {len(students)} submission(s) in {workers} local worker process(es)"
                      + (", their notebooks' kernels forked from a warm template" if warm_kernels.available() else "")
                      + ".")
    results = []
    with (_dask(scheduler) if scheduler else _local_pool(workers)) as (submit, as_completed):
        futures = {submit(autograde_one, f"autograde-{assignment}-{s}", str(root), assignment, s, force): s
                   for s in students}
        columns = (TextColumn("autograding {task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("{task.fields[last]}"))
        with Progress(*columns, console=console, disable=not progress) as bar:
            task = bar.add_task(assignment, total=len(futures), last="")
            for fut in as_completed(futures):
                try:
                    r = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker that died: report it, grade the rest
                    r = {"student": futures[fut], "success": False, "log": "", "seconds": 0.0,
                         "error": f"the task failed: {type(exc).__name__}: {exc}"}
                results.append(r)
                mark = "✓" if r["success"] else "✗"
                bar.update(task, advance=1, last=f"{mark} {r['student']} ({r['seconds']:.1f} s)")
    return results


@contextlib.contextmanager
def _local_pool(workers: int):
    """(submit, as_completed) of a process pool on this machine."""
    import multiprocessing

    import nbgrader.apps  # noqa: F401 - imported once, here: every forked worker starts with it

    from grader.classroom import warm_kernels

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                             initializer=warm_kernels.use_in_this_process) as pool:
        yield (lambda fn, _key, *args: pool.submit(fn, *args)), concurrent.futures.as_completed


@contextlib.contextmanager
def _dask(scheduler: str):
    """(submit, as_completed) of the Dask cluster whose scheduler is at `scheduler`."""
    from dask.distributed import Client, as_completed

    with Client(scheduler) as client:
        yield (lambda fn, key, *args: client.submit(fn, *args, key=key, pure=False)), as_completed
