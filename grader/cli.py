"""`devcourse`: the learner's command-line tool.

    devcourse list                 the exercises, in course order
    devcourse check NAME [FILE]    grade your fix on every device leg (FILE: a .py or .ipynb of your own)
    devcourse hint NAME [N]        the N-th hint (they get more explicit)
    devcourse stop                 end the warm grading processes (they also end after 15 idle minutes)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grader import course, daemon, legs, runner

console = Console(highlight=False, soft_wrap=True)  # long messages: let the terminal wrap them


def cmd_list(args) -> int:
    table = Table(title="Exercises", title_justify="left")
    for col in ("#", "name", "chapter", "title", "points"):
        table.add_column(col)
    for ex in course.load():
        table.add_row(str(ex.number), ex.name, ex.chapter, ex.title, str(ex.points))
    console.print(table)
    console.print("Check one with [bold]devcourse check NAME[/bold]; stuck? [bold]devcourse hint NAME[/bold].")
    return 0


def _exercise(name: str) -> course.Exercise:
    try:
        return course.get(name)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise SystemExit(2) from None


def cmd_check(args) -> int:
    ex = _exercise(args.name)
    file = Path(args.file) if args.file else (ex.solution_file if args.solution else ex.exercise_file)
    if not file.is_file():
        console.print(f"[red]{file} does not exist.[/red]")
        return 2
    try:
        shown = file.resolve().relative_to(Path.cwd())
    except ValueError:
        shown = file
    console.print(f"Checking [bold]{ex.name}[/bold] ({shown}) ...")
    try:
        grade = runner.grade(ex, file, device=args.device)
    except (legs.LegError, daemon.DaemonError) as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    table = Table(show_header=True, header_style="bold")
    table.add_column("check")
    table.add_column("device")
    table.add_column("result")
    for r in grade.results:
        style = {"passed": "green", "failed": "red"}.get(r.outcome, "yellow")
        table.add_row(r.check.removeprefix("test_").replace("_", " "), r.leg, f"[{style}]{r.outcome}[/{style}]")
    console.print(table)
    shown_messages = set()
    for r in grade.failures:
        if r.message not in shown_messages:
            shown_messages.add(r.message)
            console.print(f"[red]✗[/red] on {r.leg}: {escape(r.message)}")
    skipped = {r.message for r in grade.results if r.outcome == "skipped" and r.message}
    for reason in skipped:
        console.print(f"[yellow]skipped:[/yellow] {escape(reason)}")
    if grade.passed:
        console.print(f"[green]✓ {ex.name} passes on {', '.join(grade.legs())}.[/green] {ex.points} point(s).")
        return 0
    console.print(f"Not yet. Stuck? [bold]devcourse hint {ex.name}[/bold]")
    return 1


def cmd_hint(args) -> int:
    ex = _exercise(args.name)
    n = args.n
    if not 1 <= n <= len(ex.hints):
        console.print(f"[red]{ex.name} has hints 1 to {len(ex.hints)}.[/red]")
        return 2
    console.print(f"[bold]Hint {n} of {len(ex.hints)}[/bold] for {ex.name}: {ex.hints[n - 1]}")
    if n < len(ex.hints):
        console.print(f"More: devcourse hint {ex.name} {n + 1}")
    return 0


def cmd_stop(args) -> int:
    if daemon.stop():
        console.print("Stopped the grading processes of this course folder.")
    else:
        console.print("No grading processes were running for this course folder.")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="devcourse", description="Exercises in PyTorch device placement.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the exercises").set_defaults(func=cmd_list)
    c = sub.add_parser("check", help="grade an exercise on every device leg")
    c.add_argument("name")
    c.add_argument("file", nargs="?", help="grade this file instead of exercises/<path> (.py or .ipynb)")
    c.add_argument("--solution", action="store_true", help="grade the reference solution")
    c.add_argument("--device", help="one process's legs: real, cpu, cuda, cuda:N, mps, or sim")
    c.set_defaults(func=cmd_check)
    h = sub.add_parser("hint", help="show a hint")
    h.add_argument("name")
    h.add_argument("n", nargs="?", type=int, default=1)
    h.set_defaults(func=cmd_hint)
    sub.add_parser("stop", help="end the warm grading processes").set_defaults(func=cmd_stop)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
