"""An exercise's files as notebook text: the docstring (the explanation) and the code below it.

The broken program always comes from the copy of the exercise the course ships inside the package
(grader/shipped_exercises.json, the copy `devcourse reset` restores), never from the working exercises/
folder: an instructor who tried some exercises there first must not release their own fixes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from grader.learner import workspace
from grader.catalog.course import Exercise

ANSWER_MAGIC = "%%answer"
# The learner's files end their docstring with how to check them in a terminal; a notebook says it otherwise.
TERMINAL_CHECK = re.compile(r"\n\s*Check your fix with:.*$", re.S)


def split_text(text: str) -> tuple[str, str]:
    """(module docstring, the code after it, without leading blank lines) of a program's text."""
    tree = ast.parse(text)
    doc = ast.get_docstring(tree) or ""
    first = tree.body[0] if tree.body else None
    if doc and isinstance(first, ast.Expr):
        text = "\n".join(text.splitlines()[first.end_lineno:])
    return TERMINAL_CHECK.sub("", doc), text.strip("\n") + "\n"


def split_docstring(path: Path) -> tuple[str, str]:
    return split_text(Path(path).read_text(encoding="utf-8"))


def shipped_text(ex: Exercise) -> str:
    """The exercise's program as shipped, bug included (whatever exercises/ holds now)."""
    return workspace.shipped_source(ex)


def docstring(ex: Exercise) -> str:
    return split_text(shipped_text(ex))[0]


def broken_code(ex: Exercise) -> str:
    return split_text(shipped_text(ex))[1]


def solution_code(ex: Exercise) -> str:
    return split_docstring(ex.solution_file)[1]


def magic_line(ex: Exercise) -> str:
    return f"{ANSWER_MAGIC} {ex.name}"


def source_answer(ex: Exercise) -> str:
    """The answer cell of the instructor's source notebook: the reference fix, between nbgrader's markers."""
    return f"{magic_line(ex)}\n### BEGIN SOLUTION\n{solution_code(ex)}### END SOLUTION"


def released_answer(ex: Exercise) -> str:
    """What the learner receives in the same cell: the broken program."""
    return f"{magic_line(ex)}\n{broken_code(ex)}".rstrip("\n")


def answer_code(name: str, cell_source: str) -> str:
    """The program an answer cell holds, as a file to grade: its `%%answer` line (if it kept it) replaced by a
    comment, so that line numbers in messages are the cell's."""
    first, _, body = cell_source.partition("\n")
    if first.strip().startswith(ANSWER_MAGIC):
        return f"# the answer cell of {name}\n{body}\n"
    return cell_source + "\n"
