"""A class's answers graded by the grading engine: each distinct answer once, several at once.

An answer is an exercise and the program its answer cell holds. The engine (grader.engine.runner, the same one as
`devcourse check`) grades it in its own worker processes, isolated by the operating system where the host
allows (grader.guard.sandbox); nothing of the submitted notebook runs anywhere else.

Identical programs get identical grades (the checks draw fresh inputs, but tools/determinism.py finds no
check whose outcome changes between runs), so an answer that several submissions share (an exercise left
untouched, the same one-line fix) is graded once per autograding run, and every copy gets that grade.

The answers of one exercise are graded in batches (runner.grade_many, grader.engine.batch): pytest starts and
collects the checks once per batch and leg family, which was most of a lone grading's CPU time, and each
answer still runs in a process of its own, isolated from its batchmates as from any other grading.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from grader.learner import targets
from grader.engine import runner, settings
from grader.catalog import course


def default_jobs() -> int:
    """Batches in grading at once: each keeps both of the engine's leg families busy on a core each, and
    spends part of its time starting workers; one more than the cores keeps them all busy."""
    return (os.cpu_count() or 1) + 1


class ClassGrades:
    """Grades of answers, by (exercise name, program). `submit` starts one (or finds it started), `grade`
    waits for it. Use as a context manager: the answers' files are removed at the end."""

    def __init__(self, jobs: int | None = None):
        self._folder = Path(tempfile.mkdtemp(prefix="devcourse-class-"))
        self._jobs = jobs or default_jobs()
        self._pool = ThreadPoolExecutor(self._jobs, thread_name_prefix="grade")
        self._started: dict[tuple[str, str], Future] = {}
        self._lock = threading.Lock()
        self.distinct = 0  # answers graded, for the summary line
        self.asked = 0  # answers asked for, copies included

    def __enter__(self) -> ClassGrades:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def after_fork(self) -> None:
        """In a fork of the process that made this (grader.classroom.autograde's converter processes): the parent's
        threads are not here, and its lock may have been held; grades already made stay. The answers' folder
        stays the parent's to remove."""
        self._pool = ThreadPoolExecutor(self._jobs, thread_name_prefix="grade")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._folder, ignore_errors=True)

    def submit(self, name: str, code: str) -> Future:
        return self.submit_all([(name, code)])[0]

    def submit_all(self, answers: list[tuple[str, str]]) -> list[Future]:
        """Start grading every (exercise name, program) not started yet; their futures, in order. The new
        answers of one exercise are graded in batches (runner.grade_many: one collection of the checks per
        batch and leg family, each answer in a process of its own); the first batch of every exercise is
        started first, so the first submissions' grades come early."""
        new: dict[str, list[tuple[str, str, Future]]] = {}
        out = []
        with self._lock:
            for name, code in answers:
                digest = hashlib.sha256(f"{name}\0{code}".encode()).hexdigest()
                self.asked += 1
                if (name, digest) not in self._started:
                    self.distinct += 1
                    self._started[(name, digest)] = Future()
                    new.setdefault(name, []).append((code, digest, self._started[(name, digest)]))
                out.append(self._started[(name, digest)])
        batches = {name: _split(items, BATCH_SIZE) for name, items in new.items()}
        for round_ in itertools.zip_longest(*batches.values()):
            for name, batch in zip(batches, round_):
                if batch:
                    self._pool.submit(self._grade, name, batch)
        return out

    def grade(self, name: str, code: str) -> runner.Grade:
        return self.submit(name, code).result()

    def _grade(self, name: str, batch: list[tuple[str, str, Future]]) -> None:
        try:
            exercise = course.get(name)
            exercise = targets.with_timeout(exercise, settings.check_timeout())  # the instructor's, for this class
            files = [self._write(name, code, digest) for code, digest, _ in batch]
            grades = runner.grade_many(exercise, files) if len(files) > 1 else [runner.grade(exercise, files[0])]
            for (_, _, future), grade in zip(batch, grades):
                future.set_result(grade)
        except BaseException as exc:  # noqa: BLE001 - whoever waits for these answers hears of it
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)

    def _write(self, name: str, code: str, digest: str) -> Path:
        file = self._folder / digest[:24] / f"{name}.py"  # named as the exercise: messages name the file
        file.parent.mkdir()
        file.write_text(code, encoding="utf-8")
        return file


#: Answers of one exercise graded by one batch at most: a batch's collection (about 0.07 s of CPU per leg family)
#: is shared by all of them, and its grades come back together, so smaller batches return the first grades sooner.
BATCH_SIZE = 12


def _split(items: list, most: int) -> list[list]:
    """`items` in consecutive batches of at most `most`, as even as can be."""
    count = -(-len(items) // most)
    size = -(-len(items) // count) if items else 0
    return [items[i:i + size] for i in range(0, len(items), size)] if items else []
