"""`devcourse classroom ...`: the instructor's commands.

    devcourse classroom generate DIR [--per-chapter] [--only a,b]   an nbgrader course folder from course.toml
    devcourse classroom autograde ASSIGNMENT [--root DIR] [--workers N] [--scheduler ADDRESS] [--unisolated]
                                                                     the answers graded by the engine, scores
                                                                     in nbgrader's gradebook

grader/cli.py adds these with one call: `classroom.cli.add_parser(sub)`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

console = Console(highlight=False, soft_wrap=True)


def cmd_generate(args) -> int:
    from grader.classroom import generate

    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    console.print("Building the answer cells and the points split from the exercises as the course ships them "
                  "(grader/shipped_exercises.json), not from exercises/: your own edits there are not released. "
                  f"Grading each shipped exercise once to split its points, then writing {args.dir} ...")
    try:
        written = generate.generate(Path(args.dir), per_chapter=args.per_chapter, only=only,
                                    course_id=args.course_id, progress=lambda p: console.print(f"  wrote {p}"))
    except (KeyError, ValueError) as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        return 2
    console.print(f"[green]{len(written)} assignment(s).[/green] Next, in {args.dir}: "
                  "[bold]nbgrader generate_assignment ASSIGNMENT[/bold] (see the instructors' guide).")
    return 0


def cmd_autograde(args) -> int:
    from grader.classroom import autograde, isolation
    from grader.engine.daemon import DaemonError

    found = isolation.status()
    if not found.available:
        if not args.unisolated:
            console.print(f"[red]{isolation.refusal(found)}[/red]")
            return 2
        console.print(f"[yellow]{isolation.warning(found)}[/yellow]")
    students = [s.strip() for s in args.student.split(",")] if args.student else None
    try:
        results = autograde.autograde(Path(args.root), args.assignment, students=students, workers=args.workers,
                                      scheduler=args.scheduler, force=not args.no_force, console=console)
    except (FileNotFoundError, DaemonError) as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    if not results:  # --no-force, and every submission was autograded already
        console.print(f"Nothing to autograde for {args.assignment}: drop --no-force to grade them all again.")
        return 0
    failed = [r for r in results if not r["success"]]
    for r in failed:
        console.print(f"[red]✗ {r['student']}[/red]: nbgrader could not autograde the submission:\n{r['error'] or r['log']}")
    console.print(f"Autograded {len(results) - len(failed)} of {len(results)} submission(s) of {args.assignment}.")
    return 1 if failed else 0


def add_parser(sub) -> argparse.ArgumentParser:
    """Add `classroom` and its subcommands to devcourse's subparsers `sub`."""
    p = sub.add_parser("classroom", help="instructors: nbgrader assignments and parallel autograding")
    csub = p.add_subparsers(dest="classroom_command", required=True)
    g = csub.add_parser("generate", help="write an nbgrader course folder (source notebooks, nbgrader_config.py)")
    g.add_argument("dir")
    g.add_argument("--per-chapter", action="store_true", help="one assignment per chapter instead of per part")
    g.add_argument("--only", help="comma-separated exercise names")
    g.add_argument("--course-id", default="device-course")
    g.set_defaults(func=cmd_generate)
    a = csub.add_parser("autograde", help="grade the answer cells with the grading engine (no notebook runs); "
                                          "scores into nbgrader's gradebook")
    a.add_argument("assignment")
    a.add_argument("--root", default=".", help="the course folder (where nbgrader_config.py is)")
    a.add_argument("--student", help="comma-separated student ids (default: every submission)")
    a.add_argument("--workers", type=int, help="answers in grading at once on this host (default: one more than cores)")
    a.add_argument("--scheduler", help="address of a running Dask scheduler (a cluster): one task per submission")
    a.add_argument("--unisolated", action="store_true",
                   help="grade even where the grading workers cannot be isolated by the operating system")
    a.add_argument("--no-force", action="store_true", help="skip submissions already autograded and not submitted again since")
    a.set_defaults(func=cmd_autograde)
    return p
