"""`devcourse dev check [NAME]`: the one command an exercise author runs (as rustlings' `dev check`).

It regenerates every derived file (grader.authoring.derived), then runs every check a new or changed exercise
must pass (files, book, policy, verdicts over several gradings, the GPU verdict tables), and ends with "done",
or with what is missing and the command that fixes each. NAME limits it to one exercise; without it, every
exercise. Exit status 0 on "done", 1 when something is missing, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.text import Text

from grader.authoring import Problem

DEFAULT_REPEAT = 3


def add_parser(sub, func) -> None:
    dev = sub.add_parser("dev", help="for course authors: check an exercise and everything made from it")
    dev_sub = dev.add_subparsers(dest="dev_command", required=True)
    c = dev_sub.add_parser("check", help="regenerate the derived files, run every check of an exercise (default: "
                                         "all of them), say what is missing and the command that fixes each",
                           description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("name", nargs="?", help="the exercise (its name in course.toml); default: every exercise")
    c.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                   help=f"grade every submission this many times, each on fresh draws (default {DEFAULT_REPEAT})")
    c.add_argument("--await-gpu", action="store_true",
                   help="for an author without 2 GPUs: list NAME in grader/verdicts/pending.toml as awaiting the "
                        "maintainers' GPU run, which fills its rows of the verdict tables")
    c.set_defaults(func=func)


def run(args, console: Console) -> int:
    # Imported here: `devcourse` builds this command's parser for every command, and these import nbformat,
    # the policy and the grading client, which a learner's commands do without.
    from grader.catalog import course
    from grader.authoring import derived, gpu_tables

    if args.repeat < 1:
        console.print(Text("--repeat must be at least 1", style="red"))
        return 2
    if args.await_gpu and not args.name:
        console.print(Text("--await-gpu needs the exercise's NAME", style="red"))
        return 2
    started = time.monotonic()
    try:
        exercises = course.load()
    except course.CourseError as exc:
        return report(console, [Problem(f"course.toml: {exc}", "fix course.toml")], [], started)
    found: list[Problem] = []
    if args.name:
        try:
            exercises = (course.get(args.name),)
        except KeyError as exc:
            exercises = ()
            found.append(Problem(f"{exc.args[0]}", "a new exercise starts with its [[exercises]] entry in course.toml "
                                 "(grader/AUTHORING.md)"))
    if args.await_gpu and exercises:
        added = gpu_tables.await_gpu(args.name)
        if added:
            console.print(Text(f"Listed {args.name} in grader/verdicts/pending.toml ({', '.join(added)}): its rows of "
                               "the verdict tables await the maintainers' GPU run."))

    with console.status("Regenerating the derived files..."):
        regenerated = derived.regenerate()
    for what, command in regenerated:
        console.print(Text.assemble("Regenerated: ", (what, "cyan"), f"  ({command})"))
    with console.status("Checking the course's files and the book..."):
        found += course_wide(every_page=not args.name)
    for ex in exercises:
        with console.status(f"Grading {ex.name}'s submissions {args.repeat} time(s) on every leg of this machine..."):
            of_exercise = exercise_problems(ex, args.repeat)
        if len(exercises) > 1:
            console.print(Text(f"{ex.name}: {len(of_exercise) or 'nothing'} missing"))
        found += of_exercise
    for ex in exercises:
        waiting = gpu_tables.awaiting(ex)
        if waiting:
            console.print(Text(f"Awaiting a GPU run: {ex.name}'s rows of the verdict tables ({', '.join(waiting)}) "
                               f"wait for the maintainers' {gpu_tables.GPU_RUN} (grader/verdicts/pending.toml).",
                               style="yellow"))
    what = (exercises[0].name if len(exercises) == 1 else f"{len(exercises)} exercises") if exercises else ""
    return report(console, list(dict.fromkeys(found)), regenerated, started, what)


def course_wide(every_page: bool) -> list[Problem]:
    """What concerns no exercise in particular: files that course.toml does not know, ledger entries that no page
    marks, and, for the whole course, claims marked on any page that the ledger does not back."""
    from grader.authoring import book, files

    pages = book_pages()
    return files.files_without_metadata() + book.unmarked_claims(pages) + (book.unbacked_claims(pages)
                                                                           if every_page else [])


def exercise_problems(ex, repeat: int) -> list[Problem]:
    """The exercise's files, book and policy, then its submissions graded `repeat` times and the GPU tables."""
    from grader.engine import daemon
    from grader.authoring import book, files, gpu_tables, submissions

    found = files.problems(ex) + book.problems(ex) + submissions.refused_by_policy(ex)
    if not ex.grader_file.is_file():
        return found
    try:
        graded = submissions.grade_all(ex, repeat)
    except daemon.DaemonError as exc:
        return found + [Problem(f"the grading processes could not start: {exc}",
                                f"fix what the message says (devcourse check {ex.name} says it too)", ex.name)]
    return (found + submissions.problems(ex, graded)
            + gpu_tables.problems(ex, {label: grades[0] for label, grades in graded.items()}))


def book_pages() -> list:
    from grader.authoring.derived import book_ext

    return book_ext("output_store").toc_pages()


def report(console: Console, found: list[Problem], regenerated: list, started: float, what: str = "") -> int:
    seconds = time.monotonic() - started
    if not found:
        verb = "passes" if " " not in what else "pass"  # "noise_batch passes", "40 exercises pass"
        console.print(Text.assemble(("done", "bold green"), f": {what} {verb} every check ({seconds:.0f} s)."
                                    + (" Commit the regenerated files too." if regenerated else "")))
        return 0
    console.print(Text(f"{len(found)} thing{'s' if len(found) > 1 else ''} missing"
                       + (f" ({what})" if what else "") + ":", style="bold red"))
    for i, p in enumerate(found, start=1):
        console.print(Text.assemble(f"{i:>2}. ", str(p)))
        console.print(Text.assemble("    fix: ", (p.fix, "cyan")))
    console.print(Text("Run devcourse dev check again once they are fixed.", style="bold"))
    return 1
