"""What an exercise author must have done, checked in one place: `devcourse dev check [NAME]`
(grader.authoring.command) and the project's tests (tests/test_course.py, test_verdicts.py, test_notebooks.py,
test_book_links.py, tests/book/) both call these modules, so the command and the tests cannot disagree.

One module per job: `derived` (the files generated from others: chapter notebooks, the shipped copy of the
exercises, the book's launch notebooks), `files` (course.toml and the files each exercise needs), `book` (the
section that explains the bug, the chapter's layout, the claims ledger), `submissions` (the policy, then
grading every submission several times: verdicts and draws that change them), `gpu_tables` (the verdict tables
recorded on GPUs, and the list of exercises awaiting a GPU run). Each check returns Problems: what is missing
and the command (or edit) that fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    what: str  # what is missing or wrong, in a sentence
    fix: str  # the command that fixes it, or the edit to make and the command that shows it
    exercise: str = ""  # the exercise it belongs to; "" for the course as a whole

    def __str__(self) -> str:
        return f"{self.exercise + ': ' if self.exercise else ''}{self.what}"
