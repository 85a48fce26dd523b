"""One nbgrader *source* notebook (the instructor's version) for a list of exercises.

Per exercise: an explanation (locked markdown: title, the bug it teaches, the program's docstring), the
answer cell (an nbgrader solution cell holding the reference fix; `release.ReleaseBrokenCode` puts the
broken program there in the released notebook), a visible self-check cell (locked), and one test cell
(nbgrader "autograder tests") per points block, with a visible check and a hidden one.
"""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.classroom import blocks as blocks_mod
from grader.classroom import source
from grader.classroom.release import META
from grader.catalog.course import Exercise

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _nb(kind: str, grade_id: str, points: float | None = None) -> dict:
    meta = {"grade_id": grade_id, "locked": kind in ("locked", "tests"), "schema_version": 3,
            "solution": kind == "answer", "grade": kind == "tests", "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _locked_md(text: str, grade_id: str):
    return new_markdown_cell(text, metadata=_nb("locked", grade_id), id=grade_id)


def _locked_code(text: str, grade_id: str):
    return new_code_cell(text, metadata=_nb("locked", grade_id), id=grade_id)


def intro_cells(title: str, exercises: list[Exercise]) -> list:
    names = ", ".join(f"`{e.name}`" for e in exercises)
    total = sum(e.points for e in exercises)
    text = (
        f"# {title}\n\n"
        f"Exercises: {names} ({total:g} points). Each is a small program with one device bug. Fix it in its "
        "answer cell (the one that starts with `%%answer`; keep that first line) and run the cell, then run the "
        "self-check cell below it: it grades your code on the CPU and on a simulated accelerator with two devices "
        "(and on every GPU of the machine it runs on), and says what fails and why. The test cells below each "
        "self-check say which of the exercise's points you have; *Validate* runs them all.\n\n"
        "Your code is graded by the course's grader in processes of its own, not run in this notebook. When your "
        "submission is graded, only your answer cells count: they are graded again the same way on the "
        "instructor's machine, and nothing else in the notebook is run."
    )
    return [_locked_md(text, "intro"), _locked_code("%load_ext grader.classroom.kernel", "setup")]


def exercise_cells(ex: Exercise, blocks: list[blocks_mod.Block]) -> list:
    doc = source.docstring(ex)
    head, _, rest = doc.partition("\n")
    explanation = (
        f"## {ex.number}. {ex.title}\n\n**What it teaches:** {ex.teaches}\n\n"
        f"**{head.strip()}**\n\n```text\n{rest.strip()}\n```\n\n"
        "Fix the answer cell below and run it, then run the self-check under it.\n\n"
        f"Points: {ex.points} — " + "; ".join(f"{b.points:g} for {blocks_mod.TITLES[b.name]}" for b in blocks)
        + (" (each also requires what already worked: " + ", ".join(blocks_mod.TITLES[k].split(' (')[0]
                                                                      for k in blocks[0].requires[1:]) + ")"
           if blocks[0].requires[1:] else "") + "."
    )
    answer_id = f"{ex.name}-answer"
    answer = new_code_cell(source.source_answer(ex), id=answer_id, metadata={
        **_nb("answer", answer_id), META: {"exercise": ex.name, "release": source.released_answer(ex)}})
    cells = [_locked_md(explanation, f"{ex.name}-explanation"), answer,
             _locked_code(f"from grader.classroom.kernel import self_check\nself_check({ex.name!r})",
                          f"{ex.name}-check")]
    for b in blocks:
        args = ", ".join(repr(x) for x in (ex.name, *b.requires))
        # No hidden part: `devcourse classroom autograde` grades the answer cells with the engine and never runs
        # this cell; a hidden part would only make nbgrader report every released test cell as changed.
        text = (f"# {ex.name}: {blocks_mod.short_title(b.name)} ({b.points:g} point(s))\n"
                f"from grader.classroom.kernel import require\nrequire({args})")
        cells.append(new_code_cell(text, id=b.grade_id, metadata=_nb("tests", b.grade_id, b.points)))
    return cells


def build(title: str, sections: list[tuple[str, list[Exercise]]], split: dict[str, list[blocks_mod.Block]]):
    """The notebook of one assignment: sections [(chapter, exercises)], each under its chapter's heading
    when there are several."""
    nb = new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    nb.cells = intro_cells(title, [e for _, exs in sections for e in exs])
    for chapter, exercises in sections:
        if len(sections) > 1:
            nb.cells.append(_locked_md(f"# Chapter: {chapter.replace('-', ' ')}", f"chapter-{chapter}"))
        for ex in exercises:
            nb.cells += exercise_cells(ex, split[ex.name])
    nbformat.validate(nb)
    return nb
