"""The course in a notebook: an IPython extension (`%load_ext grader.magics`) with two commands.

    %%exercise NAME        first line of an exercise cell: saves the cell's code to the learner's state folder
                           (grader.learner.workspace.notebook_file: .devcourse/notebook/NAME.py), then runs it here
    %devcourse check NAME  grades the code the exercise cell saved, on every device leg, and shows the same
                           table and messages as `devcourse check` (as HTML; plain text elsewhere)
    %devcourse hint NAME [N] / %devcourse list
    %devcourse doctor [--steps N] [--device D] [CELLS]
                           the doctor (`devcourse doctor`) on the cells run so far, or those numbered
                           ("3 5-7"), each finding at its cell and line (grader.doctor.notebook)

The saved file starts with one comment line standing for the `%%exercise` line, so the line numbers in the
grader's messages are the cell's own. `check(NAME)` is the same check as a plain function call.
"""

from __future__ import annotations

import shlex

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from grader.learner import milestones, report, targets, workspace
from grader.catalog import course
from grader.learner.progress import NOTEBOOK, Progress


class Shown:
    """A report that Jupyter shows as HTML (with the terminal's colours) and a console as plain text."""

    def __init__(self, render):
        self.render = render

    def _repr_html_(self) -> str:
        return report.render_html(self.render)

    def __repr__(self) -> str:
        return report.render_text(self.render).rstrip()


class Checked(Shown):
    def __init__(self, grade, render):
        super().__init__(render)
        self.grade = grade
        self.passed = grade.passed


def _exercise(name: str) -> course.Exercise:
    try:
        return course.get(name.strip())
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None


def save(name: str, source: str):
    """Save an exercise cell's code where `check` grades it; its path."""
    ex = _exercise(name)
    path = workspace.notebook_file(ex)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# %%exercise {ex.name} (saved from a notebook cell)\n{source}", encoding="utf-8")
    return path


def check(name: str, device: str | None = None, timeout: float | None = None):
    """Grade the code that the exercise cell of NAME saved; the result shows as the terminal's report."""
    ex = _exercise(name)
    path = workspace.notebook_file(ex)
    if not path.is_file():
        return Shown(lambda c: c.print(f"Run the exercise cell of {ex.name} first (the one that starts with "
                                       f"%%exercise {ex.name}): it saves your code for the check.",
                                       style="red", markup=False))
    grade = targets.grade(ex, path, device, timeout)
    prog = Progress.load()
    if device is None:  # progress comes from full checks only, this one by the notebook route (grader.learner.progress)
        prog.record_check(ex, grade.passed, NOTEBOOK)
    reached = milestones.after_pass(prog, ex) if grade.passed and device is None else []

    def render(console):
        report.print_grade(console, grade, f"the exercise cell of {ex.name}",
                           hint_command=f"%devcourse hint {ex.name}")
        if grade.passed:
            for text in reached:
                console.print(text, style="green", markup=False)
            done, total, earned, points = Progress.load().totals()
            console.print(f"Course progress: {done} of {total} exercises done, {earned} of {points} points.",
                          style="dim", markup=False)

    return Checked(grade, render)


def hint(name: str, n: int | None = None):
    ex = _exercise(name)
    prog = Progress.load()
    n = n if n is not None else min(prog.hints_seen(ex.name) + 1, len(ex.hints))
    if not 1 <= n <= len(ex.hints):
        raise ValueError(f"{ex.name} has hints 1 to {len(ex.hints)}.")
    prog.saw_hint(ex, n)
    text = report.hint_text(ex, n)
    text.plain = text.plain.replace("devcourse hint", "%devcourse hint")
    return Shown(lambda c: c.print(text))


def doctor(shell, line: str):
    """%devcourse doctor: the report of `devcourse doctor` for this notebook's cells."""
    from grader.doctor import notebook, render

    args, wanted = notebook.parse(line)
    cells = notebook.cells_of_session(shell, wanted)
    result = notebook.diagnose_cells(cells, args.steps, args.device, args.profile, args.timeout)
    shown = Shown(lambda c: render.print_report(c, result, locate=notebook.locate))
    shown.result = result
    return shown


def listing():
    prog = Progress.load()
    return Shown(lambda c: report.print_list(c, prog, prog.next_exercise()))


@magics_class
class CourseMagics(Magics):
    @cell_magic
    def exercise(self, line: str, cell: str):
        """%%exercise NAME: save this cell's code for `%devcourse check NAME`, then run it."""
        path = save(line, cell)
        code = compile("\n" + cell, str(path), "exec")  # line numbers as in the cell (line 1 is %%exercise)
        exec(code, self.shell.user_ns)  # noqa: S102 - the learner's own code, in their own kernel

    @line_magic
    def devcourse(self, line: str):
        """%devcourse check NAME | hint NAME [N] | list | doctor [OPTIONS] [CELLS]"""
        # Shown now rather than returned: a cell shows only its last line's value, and a check cell with a
        # second command (a hint) showed the hint alone.
        display(self._run(line))

    def _run(self, line: str):
        words = shlex.split(line)
        if not words or words[0] not in ("check", "hint", "list", "doctor"):
            raise ValueError("usage: %devcourse check NAME, %devcourse hint NAME [N], %devcourse list or "
                             "%devcourse doctor [--steps N] [--device D] [CELLS]")
        if words[0] == "doctor":
            return doctor(self.shell, line.split("doctor", 1)[1])
        if words[0] == "list":
            return listing()
        if len(words) < 2:
            raise ValueError(f"%devcourse {words[0]} needs the exercise's name")
        if words[0] == "check":
            return check(words[1])
        return hint(words[1], int(words[2]) if len(words) > 2 else None)


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(CourseMagics)
