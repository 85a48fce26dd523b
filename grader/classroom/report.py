"""A Grade as `devcourse check` shows it, for the notebook's self-check cell (in the learner's kernel, and in
the autograded notebook and its feedback, where grader.classroom.engine_grading puts the engine's report).

When this tree's learner CLI has its shared renderer (`grader.learner.report.print_grade`), the self-check uses it,
so the notebook and the terminal say the same by construction; otherwise it prints what `devcourse check`
printed before that renderer existed (a table of checks × devices, each distinct failure once, the verdict).
In a notebook the report is shown as HTML, with the plain text as its alternative."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grader.engine.runner import Grade

SHOWN_AS = "the answer cell"


def _shared():
    try:
        from grader.learner import report as shared
    except ImportError:
        return None
    return shared if hasattr(shared, "print_grade") else None


def _fallback(console: Console, grade: Grade) -> None:
    t = Table(show_header=True, header_style="bold")
    for col in ("check", "device", "result"):
        t.add_column(col)
    for r in grade.results:
        style = {"passed": "green", "failed": "red"}.get(r.outcome, "yellow")
        t.add_row(r.check.removeprefix("test_").replace("_", " "), r.leg, f"[{style}]{r.outcome}[/{style}]")
    console.print(t)
    shown = set()
    for r in grade.failures:
        if r.message not in shown:
            shown.add(r.message)
            console.print(f"[red]✗[/red] on {r.leg}: {escape(r.message)}")
    for reason in {r.message for r in grade.results if r.outcome == "skipped" and r.message}:
        console.print(f"[yellow]skipped:[/yellow] {escape(reason)}")
    ex = grade.exercise
    if grade.passed:
        console.print(f"[green]✓ {ex.name} passes on {', '.join(grade.legs())}.[/green] {ex.points} point(s).")
    else:
        console.print(f"Not yet. Stuck? {escape(stuck(ex))}")


def stuck(ex) -> str:
    """Where a learner of the class finds help: the book's section on the bug. An assignment has no hints,
    and `devcourse hint` is a terminal command of the course's own folder, which a class's learner lacks."""
    from grader.catalog import book_links

    if not ex.explained_in:
        return "the book's chapter on the exercise explains the bug."
    page, _ = book_links.split(ex)
    return f"the book explains the bug in \"{book_links.section_title(ex)}\" ({book_links.page_title(page)})."


def render(console: Console, grade: Grade) -> None:
    shared = _shared()
    if shared is not None:
        shared.print_grade(console, grade, SHOWN_AS, hint_command=stuck(grade.exercise))
    else:
        _fallback(console, grade)


def plain(grade: Grade, width: int = 110) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False, force_jupyter=False, color_system=None,
                      highlight=False,
                      soft_wrap=True)
    render(console, grade)
    return console.file.getvalue()


def html(grade: Grade, width: int = 110) -> str:
    console = Console(file=io.StringIO(), record=True, width=width, force_terminal=True, force_jupyter=False,
                      color_system="truecolor",
                      highlight=False)
    render(console, grade)
    return console.export_html(inline_styles=True, code_format='<pre style="white-space: pre-wrap">{code}</pre>')


def show(grade: Grade) -> None:
    """HTML (with a plain-text alternative) in a notebook, plain text elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import display

        in_kernel = get_ipython() is not None and hasattr(get_ipython(), "kernel")
    except ImportError:
        in_kernel = False
    if in_kernel:
        display({"text/html": html(grade), "text/plain": plain(grade)}, raw=True)
    else:
        print(plain(grade), end="")
