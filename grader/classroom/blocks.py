"""Points blocks: how an exercise's points become nbgrader test cells, and a Grade's verdict on each.

Every check result of a Grade belongs to one block:

    cpu          a correctness check on the CPU leg
    accelerator  a correctness check on any other leg (sim:0, sim:1, and each cuda:N or mps the grading
                 host has)
    copies       a cost check, on any leg: a grader function that measures copies or round trips
                 (it uses `no_round_trips` or `measure` from grader.engine.expect)

A failure of the grading process itself (a crash, a time-out, a trick) fails every block.

The shipped exercise decides which blocks carry points: the blocks on which it fails are what the exercise
teaches ("fix blocks"), and share the points in the ratio cpu 1 : accelerator 2 : copies 1. The blocks it
already passes ("keep blocks") carry no points of their own, but every fix block also requires them, so
a fix that breaks what worked earns nothing. An untouched notebook therefore scores 0, and a partial fix
(right on the accelerator, but copying data back and forth) earns the accelerator block only.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grader.catalog.course import Exercise

ORDER = ("cpu", "accelerator", "copies")
WEIGHTS = {"cpu": 1, "accelerator": 2, "copies": 1}
TITLES = {
    "cpu": "right on the CPU",
    "accelerator": "right on an accelerator (the simulated devices, and every GPU of the grading host)",
    "copies": "no needless copies or round trips",
}
COST_HELPERS = {"no_round_trips", "measure"}


@cache
def cost_checks(grader_file: Path) -> frozenset[str]:
    """Names of the grader's test functions that measure copies (they call no_round_trips or measure)."""
    tree = ast.parse(Path(grader_file).read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    f = sub.func
                    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                    if name in COST_HELPERS:
                        found.add(node.name)
    return frozenset(found)


def block_of(exercise: Exercise, check: str, leg: str) -> str | None:
    """The block of one check result; None for a failure of the grading process (it counts everywhere)."""
    if check.startswith("("):
        return None
    if check.split("[")[0] in cost_checks(exercise.grader_file):
        return "copies"
    return "cpu" if leg == "cpu" else "accelerator"


def verdicts(exercise: Exercise, results) -> dict[str, list]:
    """{block: [failed CheckResult...]} for every block with at least one check that ran, plus "process"
    failures (under None) that fail every block."""
    out: dict = {}
    for r in results:
        if r.outcome == "skipped":
            continue
        b = block_of(exercise, r.check, r.leg)
        out.setdefault(b, [])
        if r.outcome != "passed":
            out[b].append(r)
    return out


def failures_of(exercise: Exercise, results, required: tuple[str, ...]) -> list:
    """The failed results that stop the blocks `required` from passing (empty list: they pass)."""
    v = verdicts(exercise, results)
    failed = list(v.get(None, []))
    for b in required:
        if b not in v:
            failed.append(_missing(b))
        else:
            failed += v[b]
    return failed


def _missing(block: str):
    from grader.engine.runner import CheckResult

    return CheckResult("(no check ran)", "-", "failed", f"no check of the block '{block}' ran on this host")


@dataclass(frozen=True)
class Block:
    """One nbgrader test cell: `name` passes when its own checks and every keep block pass."""

    exercise: str
    name: str
    points: float
    requires: tuple[str, ...]  # blocks whose checks must all pass, this one first

    @property
    def grade_id(self) -> str:
        return f"{self.exercise}-{self.name}"


def split(exercise: Exercise, shipped_results) -> list[Block]:
    """The test cells of an exercise, from the results of its shipped (broken) file."""
    v = verdicts(exercise, shipped_results)
    present = [b for b in ORDER if b in v]
    fix = [b for b in present if v[b]] or present  # a shipped file failing nothing: every block is a fix block
    if v.get(None):  # the shipped file crashes the grading process: every block is broken
        fix = present
    keep = tuple(b for b in present if b not in fix)
    total = sum(WEIGHTS[b] for b in fix)
    points = [round(exercise.points * WEIGHTS[b] / total, 2) for b in fix]
    points[0] = round(exercise.points - sum(points[1:]), 2)  # the shares add up to the exercise's points
    return [Block(exercise.name, b, p, (b, *keep)) for b, p in zip(fix, points)]


def short_title(block: str) -> str:
    return TITLES[block].split(" (")[0]


def verdict(exercise: Exercise, results, required: tuple[str, ...]) -> tuple[bool, str]:
    """(whether the blocks `required` pass, what a test cell says about it): the failed checks, each distinct
    message once, or the blocks that pass."""
    failed = failures_of(exercise, results, required)
    what = [short_title(b) for b in required]
    if not failed:
        return True, f"{exercise.name}: " + ", ".join(what) + " ✓"
    v = verdicts(exercise, results)
    failing = [b for b in required if v.get(None) or b not in v or v[b]]
    passing = [b for b in required if b not in failing]
    head = (f"{exercise.name} does not pass yet. This test cell requires: {'; '.join(what)}. "
            f"Failed: {'; '.join(short_title(b) for b in failing)}.")
    if passing:
        head += f" Passed: {'; '.join(short_title(b) for b in passing)}."
    lines, seen = [], set()
    for r in failed:
        if r.message not in seen:
            seen.add(r.message)
            lines.append(f"{r.check.removeprefix('test_').replace('_', ' ')} on {r.leg}: {r.message}")
    return False, "\n".join([_wrapped(head, ""), *(_wrapped(ln, "  ") for ln in lines)])


#: Columns of a test cell's verdict: nbgrader's feedback shows an error unwrapped, after its name ("NotYet: "),
#: in a page about a hundred columns wide.
VERDICT_WIDTH = 90


def _wrapped(text: str, indent: str) -> str:
    """`text` folded to VERDICT_WIDTH under `indent`: its first line there, the rest two spaces further in."""
    first, *rest = text.splitlines() or [""]
    fill = lambda line, at: textwrap.fill(line, VERDICT_WIDTH, initial_indent=at, subsequent_indent=indent + "  ",
                                          break_long_words=False, break_on_hyphens=False)
    return "\n".join([fill(first, indent), *(fill(line, indent + "  ") for line in rest)])
