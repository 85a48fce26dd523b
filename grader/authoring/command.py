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
    from grader import course
    from grader.authoring import book, derived, files, gpu_tables, submissions

    if args.repeat < 1:
        console.print(Text("--repeat must be at least 1", style="red"))
        return 2
    if args.await_gpu and not args.name:
        console.print(Text("--await-gpu needs the exercise's NAME", style="red"))
        return 2
    started = time.monotonic()
    found: list[Problem] = []
    try:
        exercises = course.load()
    except course.CourseError as exc:
        return report(console, [Problem(f"course.toml: {exc}", "fix course.toml")], [], [], started)
    if args.name:
        try:
            exercises = (course.get(args.name),)
        except KeyError as exc:
            found.append(Problem(f"{exc.args[0]}", "a new exercise starts with its [[exercises]] entry in course.toml "
                                 "(grader/AUTHORING.md)"))
            exercises = ()
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
        found += files.files_without_metadata()
        found += book.unmarked_claims(book_pages())
        if not args.name:
            found += [p for chapter in sorted({e.chapter for e in exercises}) for p in book.chapter_layout(chapter)]
            found += book.unbacked_claims(book_pages())
        for ex in exercises:
            found += files.problems(ex) + book.problems(ex)
    notes = []
    for ex in exercises:
        with console.status(f"Grading {ex.name}'s {len(submissions.submissions(ex))} submissions "
                            f"{args.repeat} time(s) on every leg of this machine..."):
            found += submissions.refused_by_policy(ex)
            graded = submissions.grade_all(ex, args.repeat) if ex.grader_file.is_file() else {}
        found += submissions.problems(ex, graded) if graded else []
        found += gpu_tables.problems(ex, {label: grades[0] for label, grades in graded.items()})
        waiting = gpu_tables.awaiting(ex)
        if waiting:
            notes.append(f"{ex.name}: its rows of the GPU verdict tables ({', '.join(waiting)}) await the "
                         f"maintainers' GPU run ({gpu_tables.GPU_RUN}), listed in grader/verdicts/pending.toml")
    return report(console, unique(found), regenerated, notes, started, exercises)


def book_pages() -> list:
    from grader.authoring.derived import book_ext

    return book_ext("output_store").toc_pages()


def unique(found: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(found))


def report(console: Console, found: list[Problem], regenerated: list, notes: list[str], started: float,
           exercises: tuple = ()) -> int:
    seconds = time.monotonic() - started
    for note in notes:
        console.print(Text(f"Awaiting a GPU run: {note}.", style="yellow"))
    what = (f"{exercises[0].name}" if len(exercises) == 1 else f"{len(exercises)} exercises") if exercises else ""
    if not found:
        console.print(Text.assemble(("done", "bold green"), f": {what} passes every check ({seconds:.0f} s)."
                                    + (" Commit the regenerated files too." if regenerated else "")))
        return 0
    console.print(Text(f"{len(found)} thing{'s' if len(found) > 1 else ''} missing"
                       + (f" ({what})" if what else "") + ":", style="bold red"))
    for i, p in enumerate(found, start=1):
        console.print(Text.assemble(f"{i:>2}. ", str(p)))
        console.print(Text.assemble("    fix: ", (p.fix, "cyan")))
    console.print(Text("Run devcourse dev check again once they are fixed.", style="bold"))
    return 1
