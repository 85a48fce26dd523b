"""Reading back what `devcourse check` prints (plain, piped output), to hold it against its own --json and exit
status: the grade's table cell by cell, its headline, its failure blocks, check --all's rows and count line.
The invariants themselves are in tests/test_report_agreement.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from grader.learner import report

HEADLINE = re.compile(r"^(PASSED|FAILED): (\w+) (.*)$", re.M)
COUNT_LINE = re.compile(r"^(\d+) of (\d+) exercises pass\.$", re.M)


@dataclass
class Printed:
    """One grade as printed: its headline, its table {row title: {column: cell}}, its failure blocks."""
    headline: str
    passed: bool
    columns: list[str]
    rows: dict[str, dict[str, str]]
    failed_on: list[tuple[list[str], str]] = field(default_factory=list)  # (legs, "checks") of "FAILED on ..."
    problems: list[list[str]] = field(default_factory=list)  # legs of each "PROBLEM in the grading process of ..."
    not_run: dict[int, str] = field(default_factory=dict)  # "[n] not run: reason"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip()[1:-1].split("|")]


def grade_table(stdout: str) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The columns and rows of the first grade table (rich's ASCII box); a title wrapped over several lines is
    joined again."""
    lines = stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if re.match(r"^\| check +\|", ln))
    columns = _cells(lines[start])[1:]
    rows: dict[str, dict[str, str]] = {}
    title = None
    for ln in lines[start + 1:]:
        if not ln.startswith("|"):
            if ln.startswith("+"):
                break
            continue
        if set(ln) <= set("|-+ "):  # a rule between rows
            title = None
            continue
        cells = _cells(ln)
        if title is not None and not any(cells[1:]):  # the rest of a wrapped title
            rows[f"{title} {cells[0]}"] = rows.pop(title)
            title = f"{title} {cells[0]}"
            continue
        title = cells[0]
        rows[title] = {c: v for c, v in zip(columns, cells[1:]) if v}
    return columns, rows


def grade(stdout: str) -> Printed:
    head = HEADLINE.search(stdout)
    assert head, stdout
    columns, rows = grade_table(stdout)
    printed = Printed(head.group(0), head.group(1) == "PASSED", columns, rows)
    for m in re.finditer(r"^FAILED on ([\w:+, ]+?) \((.*)\)$", stdout, re.M):
        printed.failed_on.append((m.group(1).split(", "), m.group(2)))
    for m in re.finditer(r"^PROBLEM in the grading process of ([\w:+, ]+?) \(", stdout, re.M):
        printed.problems.append(m.group(1).split(", "))
    for m in re.finditer(r"^\[(\d+)\] not run: (.*)$", stdout, re.M):
        printed.not_run[int(m.group(1))] = m.group(2)
    return printed


def symbol(outcome: str) -> str:
    return {"passed": "ok", "failed": "FAIL"}.get(outcome, "-")


def all_rows(stdout: str) -> tuple[list[str], dict[str, tuple[dict[str, str], str]]]:
    """check --all's table: its leg columns, and {exercise: ({leg: cell}, result)}."""
    lines = stdout.splitlines()
    head = next(ln for ln in lines if re.match(r"^\| +# \| exercise +\|", ln))
    columns = _cells(head)[2:-1]
    rows = {}
    for ln in lines:
        if re.match(r"^\| +\d+ \| \w+ +\|", ln):
            cells = _cells(ln)
            rows[cells[1]] = (dict(zip(columns, cells[2:-1])), cells[-1])
    return columns, rows


PROCESS_TITLE = report.check_title(report.PROCESS_CHECK)
