"""`devcourse classroom autograde ASSIGNMENT`: nbgrader's autograde for a whole class, in parallel.

Each submission is one Dask task that runs nbgrader's own Autograde converter (through NbGraderAPI, as
`nbgrader autograde ASSIGNMENT --student ID` would) in a worker process: the same preprocessors, the same
gradebook writes, so the gradebook ends as stock `nbgrader autograde` leaves it. The students are created
in the gradebook first, by this process, so that workers never race to create one. With SQLite, the
workers wait for each other's short writes (a busy timeout); a Postgres gradebook has no such limit.

The cluster is a dask.distributed LocalCluster (one worker process per core by default) or any running
Dask scheduler (`--scheduler tcp://host:8786`, e.g. dask-jobqueue's SLURMCluster on GPU nodes; the course
folder must then be at the same path on every worker). Each worker grades through warm grading processes
of its own (grader.daemon), which this host stops at the end and other hosts' end after their idle minutes.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

SQLITE_BUSY_SECONDS = 120


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
    # Warm grading processes of this worker's own (the kernels it starts inherit the variable): one daemon
    # grades one submission at a time, so workers sharing one would wait for each other.
    os.environ["DEVCOURSE_DAEMON_DIR"] = worker_daemon_dir()
    api, _ = _api(Path(root))
    result = api.autograde(assignment, student, force=force, create=True)
    return {"student": student, "success": bool(result.get("success")), "error": result.get("error", ""),
            "log": result.get("log", ""), "seconds": time.monotonic() - start, "daemon": worker_daemon_dir()}


def worker_daemon_dir() -> str:
    return os.path.join(tempfile.gettempdir(), f"devcourse-autograde-{os.getuid()}-{os.getpid()}")


def autograde(root: Path, assignment: str, students: list[str] | None = None, workers: int | None = None,
              scheduler: str | None = None, force: bool = True, progress: bool = True, console=None) -> list[dict]:
    """Grade every submission of `assignment` (or `students`); the results, in completion order."""
    from dask.distributed import Client, LocalCluster, as_completed
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from grader import daemon

    root = Path(root).resolve()
    console = console or Console()
    students = students or submitted_students(root, assignment)
    if not students:
        raise FileNotFoundError(f"no submissions of {assignment} under {root / 'submitted'}")
    create_students(root, students)
    workers = workers or max(1, min(len(students), os.cpu_count() or 1))
    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                    dashboard_address=None, silence_logs=40)
    results = []
    try:
        with Client(scheduler or cluster) as client:
            futures = {client.submit(autograde_one, str(root), assignment, s, force, key=f"autograde-{assignment}-{s}",
                                     pure=False): s for s in students}
            columns = (TextColumn("autograding {task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[last]}"))
            with Progress(*columns, console=console, disable=not progress) as bar:
                task = bar.add_task(assignment, total=len(futures), last="")
                for fut in as_completed(futures):
                    try:
                        r = fut.result()
                    except Exception as exc:  # noqa: BLE001 - a worker that died: report it, grade the rest
                        r = {"student": futures[fut], "success": False, "log": "", "seconds": 0.0,
                             "error": f"the Dask task failed: {type(exc).__name__}: {exc}"}
                    results.append(r)
                    mark = "✓" if r["success"] else "✗"
                    bar.update(task, advance=1, last=f"{mark} {r['student']} ({r['seconds']:.1f} s)")
    finally:
        if cluster is not None:
            cluster.close()
        for where in {r["daemon"] for r in results if r.get("daemon")}:  # this host's workers' daemons
            daemon.stop(Path(where))
    return results
