"""How a Grade and the learner's progress look: a rich table in a terminal, plain ASCII text when the output
is piped (rich's Console knows which: no colour codes, no box-drawing characters then), JSON for editors and
scripts, HTML for notebooks. The CLI (grader.cli), watch mode (grader.learner.watch) and the notebook magics
(grader.magics) all print through here, so they show the same table and the same messages."""

from __future__ import annotations

import dataclasses
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from grader.learner import workspace
from grader.catalog import book_links, course
from grader.engine.runner import CheckResult, Grade

PROCESS_CHECK = "(grader process)"


def fancy(console: Console) -> bool:
    """Colours, Unicode symbols and box lines only in a terminal (or a notebook's HTML)."""
    return console.is_terminal or console.record


def _sym(console: Console, fancy_sym: str, plain: str) -> str:
    return fancy_sym if fancy(console) else plain


def _box(console: Console):
    return box.ROUNDED if fancy(console) else box.ASCII


# ------------------------------------------------------------------------------------------------ the grade
def _leg_order(leg: str) -> tuple:
    kind, _, index = leg.partition(":")
    rank = {"cpu": 0, "cuda": 1, "mps": 2, "xpu": 3, "sim": 4}.get(kind, 9)
    if "+" in leg or leg == "pair":
        rank = 8
    return (rank, int(index) if index.isdigit() else 0, leg)


#: Possessives that a check's function name cannot spell (`test_keeps_the_inputs_dtype`): restored in titles.
POSSESSIVES = ((re.compile(r"\bthe (model|caller)s\b"), r"the \1's"),
               (re.compile(r"\bthe (inputs|parameters|points|logits) (dtype|device)\b"), r"the \1' \2"))


def check_title(check: str) -> str:
    if check == PROCESS_CHECK:
        return "the grading process"
    title = check.removeprefix("test_").replace("_", " ")
    for pattern, spelled in POSSESSIVES:
        title = pattern.sub(spelled, title)
    return title


def columns(grade: Grade) -> list[str]:
    """One column per leg that has a result; the placeholder leg of a pair check that could not run ('pair')
    only when no pair ran; a grader-process failure goes under the legs of its process."""
    legs = {r.leg for r in grade.results if r.check != PROCESS_CHECK}
    if any("+" in leg for leg in legs):
        legs.discard("pair")
    if not legs:  # no check reported: the devices the grading processes stand for
        legs = {leg for r in grade.results for leg in PROCESS_LEGS.get(r.leg, [r.leg])}
    return sorted(legs, key=_leg_order)


#: The devices a grading process's --device value stands for when none of its checks reported (on a GPU
#: machine "real" also grades the GPUs, but which ones is known only from results).
PROCESS_LEGS = {"real": ["cpu"], "cpu": ["cpu"], "sim": ["sim:0", "sim:1"]}


def _process_columns(spec: str, cols: list[str]) -> list[str]:
    sim = [c for c in cols if c.startswith("sim")]
    if spec in cols:
        return [spec]
    if spec == "cpu" and "cpu" in cols:
        return ["cpu"]
    return sim if spec.startswith("sim") else [c for c in cols if not c.startswith("sim")] or cols


@dataclass
class Failure:
    """One distinct failure: the message (as the first check gave it), where the learner's code was, the
    checks and legs that failed with it, each leg's own message (they may differ by the device they name),
    and what the learner's code printed in the first of them."""
    message: str
    trace: tuple
    checks: list[str] = field(default_factory=list)
    legs: list[str] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)
    output: str = ""
    output_from: str = ""  # the check and leg whose output it is

    @property
    def of_the_process(self) -> bool:
        """A problem of the grading process (it died, was stopped, left processes behind), not a check."""
        return self.checks == [PROCESS_CHECK]


def _key(r: CheckResult) -> str:
    """Failures that differ only by the leg they name, or by what the grader called (when the same line of
    the learner's code raised the same error), are one failure."""
    text = r.message
    for leg in sorted({r.leg, *r.leg.split("+")}, key=len, reverse=True):
        if leg and leg != "-":
            text = text.replace(leg, "{leg}")
    text = re.sub(r"\b(sim|cuda):\d\b", "{leg}", text)
    if r.trace and " raised " in text:
        text = text.split(" raised ", 1)[1]
    return f"{r.trace}\n{text}"


def failures(grade: Grade) -> list[Failure]:
    """Each distinct failure once; a grading process's problem apart from the checks', under the devices
    (columns) that process grades rather than its --device value."""
    groups: dict[str, Failure] = {}
    cols = columns(grade)
    for r in grade.failures:
        process = r.check == PROCESS_CHECK
        f = groups.setdefault(f"{process}\n{_key(r)}", Failure(r.message, r.trace))
        if r.check not in f.checks:
            f.checks.append(r.check)
        for leg in (_process_columns(r.leg, cols) if process else [r.leg]):
            if leg not in f.legs:
                f.legs.append(leg)
            f.messages.setdefault(leg, r.message)
        if r.output and not f.output:
            f.output, f.output_from = r.output, f"{check_title(r.check)}, on {r.leg}"
    return list(groups.values())


def _cells(grade: Grade) -> tuple[list[str], dict[str, dict[str, CheckResult]]]:
    """The table's columns, and for each check the result shown under each column."""
    cols = columns(grade)
    cells: dict[str, dict[str, CheckResult]] = {}
    for r in grade.results:
        row = cells.setdefault(r.check, {})
        targets = _process_columns(r.leg, cols) if r.check == PROCESS_CHECK else [r.leg]
        for leg in targets:
            if leg in cols and not (leg in row and row[leg].outcome == "failed"):
                row[leg] = r
    return cols, cells


def skip_reasons(grade: Grade) -> list[str]:
    """Why the skipped cells of the table did not run, each reason once."""
    _, cells = _cells(grade)
    return list(dict.fromkeys(r.message or "skipped" for row in cells.values() for r in row.values()
                              if r.outcome == "skipped"))


def machine_note(grade: Grade) -> str | None:
    ran = {r.leg for r in grade.ran if r.check != PROCESS_CHECK}
    if any(leg.startswith("sim") for leg in ran) and not any(leg.startswith(("cuda", "mps")) for leg in ran):
        return ("no GPU on this machine: there is no cuda or mps column; the simulated accelerator (sim:0, sim:1) "
                "checks the same placement rules.")
    return None


def grade_table(console: Console, grade: Grade) -> Table:
    cols, cells = _cells(grade)
    reasons = skip_reasons(grade)
    table = Table(box=_box(console), show_header=True, header_style="bold", pad_edge=True)
    table.add_column("check")
    for c in cols:
        table.add_column(c, justify="center")
    for check, row in cells.items():
        shown = []
        for c in cols:
            r = row.get(c)
            if r is None:
                shown.append(Text(""))
            elif r.outcome == "passed":
                shown.append(Text(_sym(console, "✓", "ok"), style="green"))
            elif r.outcome == "failed":
                shown.append(Text(_sym(console, "✗", "FAIL"), style="bold red"))
            else:
                n = reasons.index(r.message or "skipped") + 1
                shown.append(Text(f"{_sym(console, '–', '-')}[{n}]", style="yellow"))
        table.add_row(Text(check_title(check)), *shown)
    return table


def _trace_lines(failure: Failure, file_shown: str) -> list[str]:
    if not failure.trace:
        return []
    if len(failure.trace) == 1 and f"line {failure.trace[0][0]}," in failure.message:
        return []  # the message's own "(line N, in f: ...)" says it all
    lines = [f"Traceback in {file_shown} (most recent call last):"]
    for line, func, code in failure.trace:
        if line is None:
            lines.append(f"  ... {code} frames of the same kind")
        else:
            lines.append(f"  line {line}, in {func}")
            if code:
                lines.append(f"    {code}")
    return lines


#: What a failure shows of the learner's own output: its last lines, each cut to a width.
OUTPUT_LINES, OUTPUT_WIDTH = 15, 200


def output_lines(output: str) -> list[str]:
    """The end of what the learner's code printed, trimmed, with a note of what was left out."""
    lines = output.rstrip("\n").splitlines()
    shown = [ln if len(ln) <= OUTPUT_WIDTH else ln[:OUTPUT_WIDTH] + f" [... {len(ln) - OUTPUT_WIDTH} more "
             "characters]" for ln in lines[-OUTPUT_LINES:]]
    if len(lines) > OUTPUT_LINES:
        shown.insert(0, f"[... {len(lines) - OUTPUT_LINES} earlier lines not shown]")
    return shown


def failure_block(console: Console, failure: Failure, file_shown: str) -> Group:
    legs = sorted(failure.legs, key=_leg_order)
    where = ", ".join(legs)
    if failure.of_the_process:
        head = Text.assemble((f"{_sym(console, '✗', 'PROBLEM')} ", "bold red"),
                             (f"in the grading process of {where}", "bold"),
                             (" (the process that runs the checks; not one check)", "dim"))
    else:
        checks = ", ".join(check_title(c) for c in failure.checks)
        head = Text.assemble((f"{_sym(console, '✗', 'FAILED')} ", "bold red"), (f"on {where}", "bold"),
                             (f" ({checks})", "dim"))
    first_leg = next((leg for leg in legs if leg in failure.messages), None)
    message = failure.messages.get(first_leg, failure.message)
    differ = len(set(failure.messages.values())) > 1
    first, _, rest = message.partition("\n")
    body = Text("  " + (f"on {first_leg}: " if differ else "") + first, style="red")
    if rest:
        body.append("\n" + "\n".join("  " + ln for ln in rest.splitlines()))
    if differ:  # the message names its device: say that the other legs failed alike, on their own device
        others = ", ".join(leg for leg in legs if leg != first_leg)
        body.append(f"\n  (the same on {others}, each with its own device in the message)", style="dim")
    parts = [head, body]
    trace = _trace_lines(failure, file_shown)
    if trace:
        parts.append(Text("\n".join("  " + ln for ln in trace), style="cyan"))
    if failure.output.strip():
        parts.append(Text(f"  Your code printed ({failure.output_from}):", style="bold"))
        parts.append(Text("\n".join("  | " + ln for ln in output_lines(failure.output))))
    return Group(*parts)


def why_not_passed(grade: Grade) -> list[str]:
    """Why the grade is not a pass, each reason in words; empty exactly when it passed. The headline, the
    --all table's result column and the exit status all follow grade.passed through here."""
    if grade.passed:
        return []
    checks = [r for r in grade.ran if r.check != PROCESS_CHECK]
    failed = [r for r in checks if r.outcome == "failed"]
    reasons = []
    if failed:
        reasons.append(f"{len(failed)} of {len(checks)} checks failed")
    process = any(r.check == PROCESS_CHECK for r in grade.failures)
    if process:
        reasons.append("the grading process had a problem (see above)")
    if grade.simulator_limits():
        reasons.append("the simulated accelerator could not run some checks (see the notes above; not a fault of "
                       "your code: please report it), so the grade is not complete")
    if not grade.ran:
        reasons.append("no check could run on this machine")
    elif not failed and not process and grade.missing_legs():
        where = " or ".join("an accelerator" if f == "accelerator" else "the CPU" for f in grade.missing_legs())
        reasons.append(f"no check ran on {where} (skipped: see the notes above), so the device bug is not "
                       "ruled out")
    return reasons or ["not every check passed"]


def verdict(console: Console, grade: Grade) -> Text:
    ex = grade.exercise
    if grade.passed:
        return Text.assemble((f"{_sym(console, '✓', 'PASSED:')} {ex.name} passes on {', '.join(grade.legs())}.",
                              "bold green"), f" {ex.points} point{'s' if ex.points != 1 else ''}.")
    return Text(f"{_sym(console, '✗', 'FAILED:')} {ex.name} does not pass yet: {'; '.join(why_not_passed(grade))}.",
                style="bold red")


def naming_the_file(grade: Grade, file_shown: str) -> Grade:
    """The grade with its messages naming the graded file as the learner knows it: the grader names the file
    it ran, an absolute path, and for a notebook's cell a copy under the state folder."""
    graded = str(Path(grade.submission).resolve())
    results = [dataclasses.replace(r, message=r.message.replace(graded, file_shown)) for r in grade.results]
    return dataclasses.replace(grade, results=results)


def print_grade(console: Console, grade: Grade, file_shown: str | None = None, hint_command: str | None = None):
    """The whole report of one check: the table, what the skips mean, each distinct failure once, the verdict."""
    file_shown = file_shown or workspace.shown(grade.submission)
    grade = naming_the_file(grade, file_shown)
    console.print(grade_table(console, grade))
    for n, reason in enumerate(skip_reasons(grade), start=1):
        console.print(Text(f"[{n}] not run: {reason}", style="yellow"))
    note = machine_note(grade)
    if note:
        console.print(Text(f"Note: {note}", style="dim"))
    for why in grade.unisolated:  # nothing when isolated: the usual case stays quiet
        what = "graded without full isolation" if why.startswith("missing:") else "graded without isolation"
        console.print(Text(f"{what}: {why}", style="yellow"))
    for f in failures(grade):
        console.print()
        console.print(failure_block(console, f, file_shown))
    console.print()
    console.print(verdict(console, grade))
    if not grade.passed and hint_command:
        console.print(Text(f"Stuck? {hint_command}", style="dim"))


def grade_json(grade: Grade, file_shown: str | None = None) -> dict:
    file_shown = file_shown or workspace.shown(grade.submission)
    grade = naming_the_file(grade, file_shown)
    return {
        "exercise": grade.exercise.name,
        "file": file_shown,
        "passed": grade.passed,
        "points": grade.exercise.points if grade.passed else 0,
        "legs": grade.legs(),
        "isolated": bool(grade.isolation) and not grade.unisolated,
        "isolation": grade.isolation,
        "results": [{"check": r.check, "leg": r.leg, "outcome": r.outcome, "message": r.message, "output": r.output,
                     "trace": [{"line": ln, "function": fn, "code": code} for ln, fn, code in r.trace]}
                    for r in grade.results],
        "failures": [{"message": f.message, "messages": f.messages, "checks": f.checks, "legs": f.legs,
                      "trace": [{"line": ln, "function": fn, "code": code} for ln, fn, code in f.trace]}
                     for f in failures(grade)],
    }


def render_text(render, width: int = 100) -> str:
    """What `render(console)` prints, as plain text (no colours, ASCII tables)."""
    console = Console(file=io.StringIO(), width=width, force_terminal=False, force_jupyter=False, color_system=None,
                      highlight=False, soft_wrap=True)  # long messages unbroken: the reader's window wraps them
    render(console)
    return console.file.getvalue()


def render_html(render, width: int = 110) -> str:
    """What `render(console)` prints, as HTML with inline styles (the terminal's look, in a notebook)."""
    console = Console(file=io.StringIO(), record=True, width=width, force_terminal=True, force_jupyter=False,
                      color_system="truecolor", highlight=False, soft_wrap=True)
    render(console)
    return console.export_html(inline_styles=True, code_format=(
        '<pre style="font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.85em; '
        'line-height: 1.35; white-space: pre-wrap">{code}</pre>'))


# ------------------------------------------------------------------------------------------------ progress
def progress_bar(console: Console, done: int, total: int, width: int = 30) -> Text:
    filled = round(width * done / total) if total else width
    if fancy(console):
        return Text.assemble(("━" * filled, "green"), ("━" * (width - filled), "grey30"))
    return Text("[" + "#" * filled + "-" * (width - filled) + "]")


STATUS_STYLE = {"done": "green", "failing": "red", "skipped": "yellow", "not started": "dim"}


def status_label(prog, name: str) -> str:
    """The exercise's status for `list`; a pass says where it comes from (`file`, `notebook` or `both`), and
    a gave-up says so."""
    routes = prog.passed_in(name) if prog.status(name) == "done" else []
    notes = (["both"] if len(routes) > 1 else routes) + (["gave up"] if prog.gave_up(name) else [])
    return prog.status(name) + (f" ({', '.join(notes)})" if notes else "")


def print_whole(console: Console, table: Table) -> None:
    """A table that is read by a program or a file when piped: there, one line per row whatever its width
    (a console that is not a terminal is 80 columns wide, and rich would cut names and fold rows to fit)."""
    if console.is_terminal or console.record:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
    width = console.width
    console.width = max(width, natural)  # print's own width= cannot exceed the console's
    try:
        console.print(table)
    finally:
        console.width = width


def print_list(console: Console, prog, nxt: course.Exercise | None) -> None:
    table = Table(box=_box(console), header_style="bold")
    for col in ("#", "exercise", "chapter", "points", "status"):
        table.add_column(col, justify="right" if col in ("#", "points") else "left")
    for ex in course.load():
        status = prog.status(ex.name)
        label = status_label(prog, ex.name)
        marker = _sym(console, "▶ ", "> ") if nxt is not None and ex.name == nxt.name else ""
        name = Text(marker + ex.name, style="bold" if marker else "")
        if ex.capstone:
            name.append(" " + _sym(console, "★", "*"), style="magenta")
        table.add_row(str(ex.number), name, ex.chapter, str(ex.points),
                      Text(label, style=STATUS_STYLE.get(status, "")))
    print_whole(console, table)
    console.print(Text(f"{_sym(console, '★', '*')} a capstone: several bugs of its part of the book in one program",
                       style="dim"))
    done, total, earned, points = prog.totals()
    console.print(Text.assemble(progress_bar(console, done, total), f" {done} of {total} exercises done, "
                                f"{earned} of {points} points"))
    if nxt is None:
        console.print(Text("Every exercise is done or skipped. Well done!", style="bold green"))
    else:
        console.print(Text.assemble("Next: ", (nxt.name, "bold"), f" ({nxt.title}): edit ",
                                    (workspace.shown(workspace.exercise_file(nxt)), "cyan"), ", then run ",
                                    (f"devcourse check {nxt.name}", "bold"), " (or devcourse watch)."))


def summary_table(console: Console, grades: list[Grade]) -> Table:
    """check --all: one row per exercise, one column per leg."""
    cols = sorted({leg for g in grades for leg in columns(g) if "+" not in leg and leg != "pair"}, key=_leg_order)
    table = Table(box=_box(console), header_style="bold")
    table.add_column("#", justify="right")
    table.add_column("exercise")
    for c in cols:
        table.add_column(c, justify="center")
    table.add_column("result")
    for g in grades:
        row = []
        for c in cols:
            on = [r for r in g.results if r.leg == c or (r.check == PROCESS_CHECK and c in _process_columns(r.leg, cols))]
            if any(r.outcome == "failed" for r in on):
                row.append(Text(_sym(console, "✗", "FAIL"), style="bold red"))
            elif any(r.outcome == "passed" for r in on):
                row.append(Text(_sym(console, "✓", "ok"), style="green"))
            else:
                row.append(Text(_sym(console, "–", "-"), style="yellow"))
        checks_failed = sum(r.check != PROCESS_CHECK for r in g.failures)
        result = (Text("passed", style="green") if g.passed else
                  Text(f"{checks_failed} failed" if checks_failed else why_not_passed(g)[0].split(" (")[0],
                       style="red"))
        table.add_row(str(g.exercise.number), g.exercise.name, *row, result)
    return table


def hint_text(ex: course.Exercise, n: int, more: str | None = None) -> Text:
    """Hint N; `more` says how to get the next one (watch mode: a key)."""
    text = Text.assemble((f"Hint {n} of {len(ex.hints)}", "bold"), f" for {ex.name}: {ex.hints[n - 1]}")
    explained = book_links.explained_line(ex)
    if explained:
        text.append(f"\n{explained}")
    if n < len(ex.hints):
        text.append(f"\nMore: {more or f'devcourse hint {ex.name}'} (next: hint {n + 1})", style="dim")
    return text
