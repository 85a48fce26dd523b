"""An exercise's files as notebook text: the docstring (the explanation) and the code below it."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.course import Exercise

ANSWER_MAGIC = "%%answer"


def split_docstring(path: Path) -> tuple[str, str]:
    """(module docstring, the code after it, without leading blank lines)."""
    text = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(text)
    doc = ast.get_docstring(tree) or ""
    first = tree.body[0] if tree.body else None
    if doc and isinstance(first, ast.Expr):
        text = "\n".join(text.splitlines()[first.end_lineno:])
    return doc, text.strip("\n") + "\n"


def docstring(ex: Exercise) -> str:
    return split_docstring(ex.exercise_file)[0]


def broken_code(ex: Exercise) -> str:
    return split_docstring(ex.exercise_file)[1]


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
