"""A class's answers graded by the grading engine: each distinct answer once, several at once.

An answer is an exercise and the program its answer cell holds. The engine (grader.runner, the same one as
`devcourse check`) grades it in its own worker processes, isolated by the operating system where the host
allows (grader.sandbox); nothing of the submitted notebook runs anywhere else.

Identical programs get identical grades (the checks draw fresh inputs, but tools/determinism.py finds no
check whose outcome changes between runs), so an answer that several submissions share (an exercise left
untouched, the same one-line fix) is graded once per autograding run, and every copy gets that grade.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from grader import course, runner, targets


def default_jobs() -> int:
    """Answers in grading at once: each grading keeps both of the engine's leg families busy on a core each,
    and spends part of its time starting workers; one more than the cores keeps them all busy."""
    return (os.cpu_count() or 1) + 1


class ClassGrades:
    """Grades of answers, by (exercise name, program). `submit` starts one (or finds it started), `grade`
    waits for it. Use as a context manager: the answers' files are removed at the end."""

    def __init__(self, jobs: int | None = None):
        self._folder = Path(tempfile.mkdtemp(prefix="devcourse-class-"))
        self._pool = ThreadPoolExecutor(jobs or default_jobs(), thread_name_prefix="grade")
        self._started: dict[tuple[str, str], Future] = {}
        self._lock = threading.Lock()
        self.distinct = 0  # answers graded, for the summary line
        self.asked = 0  # answers asked for, copies included

    def __enter__(self) -> ClassGrades:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._folder, ignore_errors=True)

    def submit(self, name: str, code: str) -> Future:
        digest = hashlib.sha256(f"{name}\0{code}".encode()).hexdigest()
        with self._lock:
            self.asked += 1
            if (name, digest) not in self._started:
                self.distinct += 1
                self._started[(name, digest)] = self._pool.submit(self._grade, name, code, digest)
            return self._started[(name, digest)]

    def grade(self, name: str, code: str) -> runner.Grade:
        return self.submit(name, code).result()

    def _grade(self, name: str, code: str, digest: str) -> runner.Grade:
        from grader.classroom.kernel import TIMEOUT_VARIABLE

        exercise = course.get(name)
        if os.environ.get(TIMEOUT_VARIABLE):  # the instructor's per-check limit for this class
            exercise = targets.with_timeout(exercise, float(os.environ[TIMEOUT_VARIABLE]))
        file = self._folder / digest[:24] / f"{name}.py"  # named as the exercise: messages name the file
        file.parent.mkdir()
        file.write_text(code, encoding="utf-8")
        return runner.grade(exercise, file)
