"""What runs inside a classroom notebook's kernel while the learner works: feedback, never the grade.

`devcourse classroom autograde` does not run the notebook: it grades the answer cells with the engine
(grader.classroom.engine_grading). This module serves the learner's own kernel (and *Validate*, and stock
`nbgrader autograde`, which runs the notebook in a kernel the submission controls: for comparison only).

* `%load_ext grader.classroom.kernel` (the notebook's first code cell) registers the cell magic `%%answer`.
* An answer cell starts with `%%answer NAME`. Its code is NOT run in the notebook: the magic only says so.
  The code is graded, like a file passed to `devcourse check`, in the grader's own processes (every device
  leg, the simulated accelerator included, with the grader's time limits and integrity checks).
* `self_check(NAME)` (a visible cell) grades the latest run of that answer cell and shows what
  `devcourse check` shows.
* `require(NAME, BLOCKS...)` (the test cells, nbgrader "autograder tests") fails unless every check of those
  blocks passes (grader.classroom.blocks). With `fresh=True` (the hidden part of notebooks generated before
  test cells lost it) it grades the answer again instead of reusing the self-check's grade. While nbgrader autogrades (NBGRADER_EXECUTION=autograde), every
  cell uses that fresh grade: one grading per answer per run, none made before the run.

The answer is read from the kernel's input history (the last executed cell starting with `%%answer NAME`),
so it is found even if the first cell, which loads the magic, was deleted. Grading writes nothing to the
cell's stderr: nbgrader scores a test cell 0 when anything appears there, so warnings and stray output of
the grading machinery are captured; a failure is an exception, which still scores 0.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import tempfile
import warnings
from pathlib import Path

from grader.classroom import blocks, report
from grader.classroom.source import ANSWER_MAGIC

_GRADES: dict[tuple, object] = {}  # (name, digest of the answer, fresh nonce) -> Grade
_FOLDER: Path | None = None


class NotAnswered(Exception):
    """The answer cell of an exercise was not run, or lost its first line."""


class NotYet(AssertionError):
    """A block of checks does not pass; the message says which checks failed and why."""


# ---------------------------------------------------------------------------------------------------------
# The %%answer magic
# ---------------------------------------------------------------------------------------------------------
def answer(line: str, cell: str) -> None:
    name = line.strip()
    print(f"Saved your answer to {name}. It is graded on every device in the grader's own processes, not run "
          "here: run the check below.")


def load_ipython_extension(ipython) -> None:
    ipython.register_magic_function(answer, magic_kind="cell", magic_name="answer")


def _history() -> list[str]:
    try:
        ip = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - IPython's builtin
    except NameError:
        return []
    return list(ip.history_manager.input_hist_raw)


def answer_source(name: str, history: list[str] | None = None) -> str:
    """The code of the last executed `%%answer NAME` cell (its first line replaced by a comment, so that
    line numbers in messages are the cell's)."""
    for cell in reversed(_history() if history is None else history):
        first, _, body = cell.partition("\n")
        if first.split() == [ANSWER_MAGIC, name]:
            return f"# the answer cell of {name}\n{body}\n"
    raise NotAnswered(f"no answer to {name} was run: run its answer cell (the one starting with "
                      f"`{ANSWER_MAGIC} {name}`; keep that first line) before checking it.")


# ---------------------------------------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def quiet():
    """Nothing reaches this cell's stderr inside: warnings are ignored, Python's and the file descriptor's
    stderr go to a scratch file."""
    sink = io.StringIO()
    saved = scratch = None
    try:
        sys.stderr.flush()
        scratch = tempfile.TemporaryFile()
        saved = os.dup(2)
        os.dup2(scratch.fileno(), 2)
    except (OSError, ValueError, AttributeError):  # no fd 2 to redirect: Python's stderr still is
        if saved is not None:
            os.close(saved)
            saved = None
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            yield sink
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
        if scratch is not None:
            scratch.close()


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = Path(tempfile.mkdtemp(prefix="devcourse-answers-"))
    return _FOLDER


def grade(name: str, fresh: bool = False, history: list[str] | None = None):
    """The Grade of the current answer to `name`, cached per answer text. `fresh` (the hidden tests) grades it
    once more instead of reusing the self-check's grade. While nbgrader autogrades, every cell uses the fresh
    grade, so that each answer is graded once per autograding run."""
    from grader.learner import targets
    from grader.engine import runner, settings
    from grader.catalog import course

    fresh = fresh or os.environ.get("NBGRADER_EXECUTION") == "autograde"
    exercise = course.get(name)
    exercise = targets.with_timeout(exercise, settings.check_timeout())  # the instructor's, for this class
    code = answer_source(name, history)
    key = (name, hashlib.sha256(code.encode()).hexdigest(), fresh)
    if key not in _GRADES:
        file = _folder() / f"{name}.py"
        file.write_text(code, encoding="utf-8")
        with quiet():
            _GRADES[key] = runner.grade(exercise, file)
    return _GRADES[key]


def self_check(name: str) -> None:
    """Grade the answer to `name` and show the result as `devcourse check` does."""
    try:
        g = grade(name)
    except NotAnswered as exc:
        print(exc)
        return
    report.show(g)


def require(name: str, *required: str, fresh: bool = False) -> None:
    """Raise NotYet unless every check of the blocks `required` passes for the answer to `name`."""
    __tracebackhide__ = True  # IPython shows the message, not this function
    from grader.catalog import course

    try:
        g = grade(name, fresh=fresh)
    except NotAnswered as exc:
        raise NotYet(str(exc)) from None
    passed, text = blocks.verdict(course.get(name), g.results, required)
    if not passed:
        raise NotYet(text)
    print(text)
