"""nbgrader preprocessor that grades a submission's answer cells with the grading engine, in place of
nbgrader's `Execute`: the submitted notebook never runs.

`devcourse classroom autograde` runs nbgrader's own Autograde converter with this preprocessor where stock
autograde executes the notebook. Everything else is nbgrader's: before it, the sanitizing steps restore
every read-only and test cell from the gradebook (OverwriteCells, here its subclass RestoreCells, which puts
back every deleted test cell) and keep one cell per grade id (DeduplicateIds); after it, SaveAutoGrades scores each test
cell from its outputs as it always does (an error output: zero; otherwise its points), and the autograded
notebook, the feedback and the formgrader show those outputs.

What this step does, per exercise of the notebook:

* the exercise and the blocks each test cell requires come from the gradebook's copy of the test cell
  (`require(NAME, BLOCKS...)`, written by `devcourse classroom generate`), not from the submission;
* the answer is the program in the cell whose grade id is `NAME-answer` (nbgrader's solution cell); it is
  graded by the engine (grader.classroom.answers), once per distinct program in the class;
* each test cell gets the verdict on its blocks as an output: a line on stdout when they pass, an error
  output (which scores zero) with the failed checks and the grader's messages when they do not;
* the self-check cell (`NAME-check`) gets the engine's whole report, as `devcourse check` shows it.

Cells the learner added, and everything else in the notebook, are left as they are and never run.
"""

from __future__ import annotations

import ast
import weakref

from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

from grader.catalog import course
from grader.classroom import blocks, report, source

#: The class's grades, shared by every notebook of one autograding run (set by grader.classroom.autograde);
#: without it (a task on a Dask worker) each process keeps its own.
SHARED = None
_REPORTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a grading's report, rendered once a run


class NotGradable(Exception):
    """The gradebook holds a test cell this step cannot grade (not one `devcourse classroom generate` wrote)."""


def required_blocks(test_source: str) -> tuple[str, tuple[str, ...]]:
    """(exercise, blocks) of a test cell's `require(NAME, BLOCK...)` call."""
    try:
        for node in ast.walk(ast.parse(test_source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require":
                name, *needed = (ast.literal_eval(a) for a in node.args)
                course.get(name)
                if needed and all(b in blocks.WEIGHTS for b in needed):
                    return name, tuple(needed)
    except (SyntaxError, ValueError, KeyError):
        pass
    raise NotGradable("no require(NAME, BLOCK...) call of a course exercise")


def test_cells(db_url: str, notebook: str, assignment: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{grade id: (exercise, blocks)} of a notebook's test cells, read from the gradebook; a test cell this step
    cannot grade maps to ("", ())."""
    out = {}
    with Gradebook(db_url) as gb:
        nb = gb.find_notebook(notebook, assignment)
        solutions = {c.name for c in nb.solution_cells}
        for cell in nb.grade_cells:
            if cell.name in solutions:
                continue
            try:
                out[cell.name] = required_blocks(gb.find_source_cell(cell.name, notebook, assignment).source)
            except NotGradable:
                out[cell.name] = ("", ())
    return out


def answer_cells(nb) -> dict[str, str]:
    """{exercise: the answer's program} of a notebook: the last solution cell of each `NAME-answer` grade id,
    as nbgrader's DeduplicateIds keeps the last one."""
    out = {}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and utils.is_solution(cell) and grade_id.endswith("-answer"):
            name = grade_id.removesuffix("-answer")
            out[name] = source.answer_code(name, cell.source)
    return out


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells, putting back every deleted test cell (add_missing_cells): after the nearest
    earlier cell of the source notebook that the submission still has, or at the end. (nbgrader's own placing
    fails when the cell before a deleted one was deleted too.)"""

    def preprocess_cell(self, cell, resources, cell_index):
        """A cell claiming a grade id the gradebook does not know (a test cell worth points, added by the learner)
        loses all of nbgrader's metadata: nbgrader itself removes only the id, and the cell, still marked as a
        grade cell, then stopped the whole submission from being autograded."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                self.log.warning("Cell %r is not in the gradebook: graded as a plain cell", grade_id)
                del cell.metadata["nbgrader"]
                return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [c.name for c in source_nb.source_cells]
        by_name = dict(zip(order, source_nb.source_cells))
        solutions = {c.name for c in source_nb.solution_cells}

        def where(grade_id):
            return next((i for i, c in enumerate(nb.cells)
                         if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id), None)

        for grade_cell in source_nb.grade_cells:
            if where(grade_cell.name) is not None or grade_cell.name not in by_name:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", grade_cell.name)
            earlier = (where(name) for name in reversed(order[:order.index(grade_cell.name)]))
            at = next((i + 1 for i in earlier if i is not None), len(nb.cells))
            nb.cells.insert(at, self.missing_cell_transform(by_name[grade_cell.name], grade_cell.max_score,
                                                            is_solution=grade_cell.name in solutions))
        return nb, resources


def _shared():
    global SHARED
    if SHARED is None:
        import atexit

        from grader.classroom.answers import ClassGrades

        SHARED = ClassGrades()
        atexit.register(SHARED.close)  # a cluster's worker process: its answers' files go with it
    return SHARED


def _stdout(text: str):
    return new_output("stream", name="stdout", text=text + "\n")


def _error(text: str):
    return new_output("error", ename="NotYet", evalue=text, traceback=[f"NotYet: {text}"])


class GradeAnswers(NbGraderPreprocessor):
    """Grade the answer cells with the engine; write each test cell's verdict and each self-check's report."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        tests = test_cells(info["db_url"], info["notebook"], info["assignment"])
        answers = answer_cells(nb)
        grades = _shared()
        names = {name for name, _ in tests.values() if name}
        pending = {name: grades.submit(name, answers[name]) for name in names if name in answers}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if utils.is_grade(cell) and grade_id in tests:
                name, needed = tests[grade_id]
                cell.outputs = [self._verdict(name, needed, pending)]
            elif utils.is_locked(cell) and grade_id.removesuffix("-check") in names and grade_id.endswith("-check"):
                cell.outputs = [self._report(grade_id.removesuffix("-check"), pending)]
        return nb, resources

    @staticmethod
    def _verdict(name: str, needed: tuple[str, ...], pending):
        if not name:
            return _error("this test cell was not written by devcourse classroom generate: grade it by hand")
        if name not in pending:
            return _error(f"{name}: the submission has no answer cell for it (grade id {name}-answer)")
        passed, text = blocks.verdict(course.get(name), pending[name].result().results, needed)
        return _stdout(text) if passed else _error(text)

    @staticmethod
    def _report(name: str, pending):
        if name not in pending:
            return _stdout(f"{name}: the submission has no answer cell for it (grade id {name}-answer)")
        grading = pending[name]
        if grading not in _REPORTS:  # the same answer in several submissions: one rendering
            grade = grading.result()
            _REPORTS[grading] = {"text/html": report.html(grade), "text/plain": report.plain(grade)}
        return new_output("display_data", data=dict(_REPORTS[grading]))
