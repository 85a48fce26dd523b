"""`devcourse`: the learner's command-line tool (rustlings-style).

    devcourse list                    every exercise in course order, its status, your progress, the next one
    devcourse check [NAME] [FILE]     grade an exercise (default: the current one) on every device leg
    devcourse check --all             grade every exercise; a table of exercises x devices
    devcourse watch                   re-check the current exercise whenever you save it (h hint, q quit ...)
    devcourse hint [NAME] [N]         the next hint (or hint N); they get more explicit
    devcourse start NAME / skip NAME  jump to an exercise / leave one for later
    devcourse reset NAME              restore the shipped (broken) file
    devcourse solution NAME           the reference fix, once yours passes (or with --give-up)
    devcourse stop                    end the warm grading processes (they also end after 15 idle minutes)
    devcourse doctor SCRIPT [ARGS]    run your own script for a few steps and report its device problems
    devcourse dev check [NAME]        for course authors: regenerate, check an exercise, say what is missing

Where files and progress live: grader.learner.workspace. How results look: grader.learner.report. `--json` on list and check
prints machine-readable results instead. Exit status: 0 when everything asked for passed, 1 when a check
failed, 2 for a usage error (unknown exercise, missing file...).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from grader.learner import milestones, report, targets, workspace
from grader.engine import daemon
from grader.catalog import course
from grader.classroom import cli as classroom_cli
from grader.learner.progress import FILE, NOTEBOOK, Progress
from grader.learner.report import hint_text
from grader.learner.targets import UsageError, exercise, grade, missing_file_message

console = Console(highlight=False)
# A terminal gets long lines wrapped at words (the terminal itself would cut them mid-word, "sim:" then "1");
# piped output keeps each message on one line, for the reader's window and for grep.
console.soft_wrap = not console.is_terminal


def _say(text: str, style: str = "") -> None:
    console.print(Text(text, style=style))


# ---------------------------------------------------------------------------------------------- helpers
def confirm(question: str) -> bool:
    try:
        answer = console.input(Text(f"{question} [y/N] ", style="bold"))
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def say_milestones(texts: list[str]) -> None:
    for text in texts:
        console.print()
        console.print(Panel(Text(text), border_style="green") if report.fancy(console) else Text(text))


def after_pass(prog: Progress, ex: course.Exercise) -> None:
    """Say what the learner has reached (the end of a part, of the course), and point at what comes next."""
    say_milestones(milestones.after_pass(prog, ex))
    nxt = prog.next_exercise()
    if nxt is None:
        _say("That was the last one: every exercise is done or skipped.", "bold green")
    elif nxt.name != ex.name:
        console.print(Text.assemble("Next: ", (nxt.name, "bold"), f" ({nxt.title}) in ",
                                    (workspace.shown(workspace.exercise_file(nxt)), "cyan"),
                                    ": devcourse check ", (nxt.name, "bold"), " (or devcourse watch)."))


# ---------------------------------------------------------------------------------------------- commands
def cmd_list(args) -> int:
    prog = Progress.load()
    nxt = prog.next_exercise()
    if args.json:
        done, total, earned, points = prog.totals()
        print(json.dumps({
            "done": done, "total": total, "points": earned, "total_points": points,
            "next": nxt.name if nxt else None,
            "exercises": [{"number": e.number, "name": e.name, "chapter": e.chapter, "title": e.title,
                           "points": e.points, "capstone": e.capstone, "status": prog.status(e.name),
                           "passed_in": prog.passed_in(e.name), "gave_up": prog.gave_up(e.name),
                           "file": workspace.shown(workspace.exercise_file(e))} for e in course.load()],
        }, indent=1))
        return 0
    report.print_list(console, prog, nxt)
    return 0


def progress_route(ex: course.Exercise, file: Path, args) -> tuple[str | None, str | None]:
    """(the route this check counts for in the exercise's progress, None when it does not count; why not).
    Progress comes only from a full check (every leg) of the learner's own code for the exercise: its file
    under exercises/, or a notebook's `%%exercise NAME` cell (grader.learner.progress)."""
    own = workspace.exercise_file(ex)
    if args.solution:
        return None, f"you checked the reference solution, not {workspace.shown(own)}"
    if args.device is not None:
        return None, f"a check limited to --device {args.device} is not a full check (devcourse check {ex.name} is)"
    if file.resolve() == own.resolve():
        return FILE, None
    given = Path(args.file) if args.file else file
    if file.resolve() == workspace.notebook_file(ex).resolve() or (
            given.suffix == ".ipynb" and file.resolve() != given.resolve()):  # its %%exercise cell was found
        return NOTEBOOK, None
    return None, (f"you checked {workspace.shown(given)}, not {workspace.shown(own)} nor a notebook's "
                  f"%%exercise {ex.name} cell")


def cmd_check(args) -> int:
    if args.all:
        return check_all(args)
    prog = Progress.load()
    ex = exercise(args.name, prog)
    if args.file and not Path(args.file).is_file():
        raise UsageError(missing_file_message(ex, Path(args.file)))
    try:
        file = targets.check_file(ex, args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not file.is_file():
        raise UsageError(missing_file_message(ex, file))
    shown = targets.shown_target(ex, args, file)
    if not args.json:
        _say(f"Checking {ex.name} ({shown}) ...", "dim")
    g = grade(ex, file, args.device, args.timeout)
    route, why_not = progress_route(ex, file, args)
    if route is not None:
        prog.record_check(ex, g.passed, route)
    if args.json:
        print(json.dumps({**report.grade_json(g, shown), "recorded": why_not is None,
                          **({"not_recorded": why_not} if why_not else {})}, indent=1))
    else:
        report.print_grade(console, g, shown, hint_command=f"devcourse hint {ex.name}")
        if why_not:
            _say(f"Not recorded in your progress: {why_not}.", "dim")
        elif g.passed:
            after_pass(prog, ex)
    return 0 if g.passed else 1


def check_all(args) -> int:
    if args.name or args.file or args.solution:
        raise UsageError("check --all grades every exercise file: give no NAME, FILE or --solution with it.")
    prog = Progress.load()
    grades = []
    for ex in course.load():
        file = workspace.exercise_file(ex)
        if not file.is_file():
            raise UsageError(missing_file_message(ex, file))
        if not args.json:
            _say(f"checking {ex.number}/{len(course.load())} {ex.name} ...", "dim")
        g = grade(ex, file, args.device, args.timeout)
        # an exercise whose file is untouched and was never checked stays "not started"
        if args.device is None and (workspace.edited(ex) or prog.result(ex.name, FILE) is not None):
            prog.record_check(ex, g.passed, chosen=False)
        grades.append(g)
    passed = all(g.passed for g in grades)
    first = next((g.exercise for g in grades if not g.passed), None)
    if args.json:
        print(json.dumps({"passed": passed, "recorded": args.device is None,
                          "exercises": [report.grade_json(g) for g in grades]}, indent=1))
        return 0 if passed else 1
    report.print_whole(console, report.summary_table(console, grades))
    if args.device is None:
        say_milestones([text for g in grades if g.passed for text in milestones.after_pass(prog, g.exercise)])
    n = sum(g.passed for g in grades)
    style = "bold green" if passed else "bold red"
    _say(f"{n} of {len(grades)} exercises pass.", style)
    if first is not None:
        _say(f"See why with: devcourse check NAME (the first failing one: devcourse check {first.name}).")
    if args.device is not None:
        _say(f"Not recorded in your progress: a check limited to --device {args.device} is not a full check "
             "(devcourse check --all is).", "dim")
    return 0 if passed else 1


def cmd_watch(args) -> int:
    from grader.learner import watch

    return watch.run(args.name, manual=args.manual, device=args.device, timeout=args.timeout, console=console)


def cmd_hint(args) -> int:
    prog = Progress.load()
    ex = exercise(args.name, prog)
    n = args.n if args.n is not None else min(prog.hints_seen(ex.name) + 1, len(ex.hints))
    if not 1 <= n <= len(ex.hints):
        raise UsageError(f"{ex.name} has hints 1 to {len(ex.hints)}.")
    prog.saw_hint(ex, n)
    console.print(hint_text(ex, n))
    return 0


def cmd_reset(args) -> int:
    ex = exercise(args.name)
    file = workspace.exercise_file(ex)
    try:
        shipped = workspace.shipped_source(ex)
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    if file.is_file() and file.read_text(encoding="utf-8") == shipped:
        _say(f"{workspace.shown(file)} is already as shipped; nothing to do.")
        return 0
    if file.is_file() and not args.yes and not confirm(
            f"Restore {workspace.shown(file)} as shipped? Your changes to it will be lost."):
        _say("Nothing changed.")
        return 0  # the learner's choice, not a failure: 1 is a failed check's status
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(shipped, encoding="utf-8")
    prog = Progress.load()
    prog.forget_file_result(ex)  # the file is broken again: not done from it until a check says so
    kept = f" ({ex.name} stays done: its notebook cell passed)" if prog.passed_in(ex.name) else ""
    _say(f"Restored {workspace.shown(file)} as shipped (with its bug); its status is cleared{kept}.", "green")
    return 0


def cmd_solution(args) -> int:
    prog = Progress.load()
    ex = exercise(args.name, prog)
    if not prog.ever_passed(ex.name) and not args.give_up:
        raise UsageError(f"the solution of {ex.name} is shown once your fix passes (devcourse check {ex.name}). "
                         f"Try the hints first (devcourse hint {ex.name}); to see it anyway: "
                         f"devcourse solution {ex.name} --give-up (recorded in your progress).")
    if args.give_up:
        prog.give_up(ex)
    source = ex.solution_file.read_text(encoding="utf-8")
    _say(f"Reference fix of {ex.name} ({ex.path}):", "bold")
    if report.fancy(console):
        from rich.syntax import Syntax  # pygments: not worth importing for every check

        console.print(Syntax(source, "python", line_numbers=True, word_wrap=True))
    else:
        console.print(Text(source), soft_wrap=True)
    return 0


def cmd_start(args) -> int:
    prog = Progress.load()
    ex = exercise(args.name)
    prog.start(ex)
    console.print(Text.assemble("Current exercise: ", (ex.name, "bold"), f" ({ex.title}). Edit ",
                                (workspace.shown(workspace.exercise_file(ex)), "cyan"), ", then run ",
                                ("devcourse check", "bold"), " or ", ("devcourse watch", "bold"), "."))
    return 0


def cmd_skip(args) -> int:
    prog = Progress.load()
    ex = exercise(args.name, prog)
    if not prog.skip(ex):
        _say(f"{ex.name} is done: there is nothing to skip, and it keeps its points.")
        return 0
    nxt = prog.next_exercise()
    _say(f"Skipped {ex.name}; `devcourse start {ex.name}` comes back to it."
         + (f" Next: {nxt.name}." if nxt else ""))
    return 0


def cmd_doctor(args) -> int:
    from grader.doctor import command

    return command.run(args, console)


def cmd_stop(args) -> int:
    if daemon.stop():
        _say("Stopped the grading processes of this course folder.")
    else:
        _say("No grading processes were running for this course folder.")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="devcourse", description="Exercises in PyTorch device placement.",
                                epilog="Start with: devcourse list, then devcourse watch (or devcourse check).")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="the exercises, your progress and the next one")
    ls.add_argument("--json", action="store_true", help="print machine-readable JSON")
    ls.set_defaults(func=cmd_list)

    c = sub.add_parser("check", help="grade an exercise on every device leg (default: the current one)")
    targets.add_check_arguments(c)
    c.set_defaults(func=cmd_check)

    w = sub.add_parser("watch", help="re-check the current exercise each time you save it")
    w.add_argument("name", nargs="?", help="start at this exercise (default: the current one)")
    w.add_argument("--manual", action="store_true", help="do not watch the file: press r to re-check")
    w.add_argument("--device", help="one process's legs only (as for check)")
    w.add_argument("--timeout", type=float, help="seconds allowed per check (default: the exercise's)")
    w.set_defaults(func=cmd_watch)

    h = sub.add_parser("hint", help="the next hint (or hint N)")
    h.add_argument("name", nargs="?")
    h.add_argument("n", nargs="?", type=int)
    h.set_defaults(func=cmd_hint)

    r = sub.add_parser("reset", help="restore the shipped (broken) exercise file")
    r.add_argument("name")
    r.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    r.set_defaults(func=cmd_reset)

    s = sub.add_parser("solution", help="show the reference fix (once your fix passes)")
    s.add_argument("name", nargs="?")
    s.add_argument("--give-up", action="store_true", help="show it now; your progress records that you gave up")
    s.set_defaults(func=cmd_solution)

    st = sub.add_parser("start", help="make NAME the current exercise")
    st.add_argument("name")
    st.set_defaults(func=cmd_start)
    sk = sub.add_parser("skip", help="leave an exercise for later (default: the current one)")
    sk.add_argument("name", nargs="?")
    sk.set_defaults(func=cmd_skip)
    sub.add_parser("stop", help="end the warm grading processes").set_defaults(func=cmd_stop)
    classroom_cli.add_parser(sub)
    from grader.doctor import command as doctor

    doctor.add_parser(sub, cmd_doctor)
    from grader.authoring import command as authoring  # devcourse dev check: for course authors

    authoring.add_parser(sub, lambda args: authoring.run(args, console))
    return p


def greet() -> None:
    """The welcome, on a learner's first run (grader.learner.milestones)."""
    text = milestones.welcome(Progress.load())
    if text:
        console.print(Panel(Text(text), title="devcourse", border_style="cyan") if report.fancy(console)
                      else Text(text + "\n"))


#: The commands that work on the learner's files and progress: they need a course folder.
IN_A_COURSE_FOLDER = {"list", "check", "watch", "hint", "reset", "solution", "start", "skip"}
#: Those that greet a newcomer first (watch greets on its own screen; reset and solution are no way to start,
#: and a declined reset writes nothing, progress included).
GREETED = {"list", "check", "hint", "start", "skip"}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command in IN_A_COURSE_FOLDER:
            workspace.require_course_folder()
            if args.command in GREETED and not getattr(args, "json", False):
                greet()
        return args.func(args)
    except (UsageError, workspace.NoCourseFolder, course.CourseError) as exc:
        console.print(Text(str(exc), style="red"))
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
