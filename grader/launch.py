"""Entry point of the `devcourse` command (and `python -m grader`).

A check waits mostly for the warm grading processes (grader.engine.daemon). `devcourse check` therefore starts
grading first thing, in a background thread, and imports the rest of the tool (rich, the report) while the
grading runs; when no grading processes are running, their start (importing torch) overlaps that import
too. Everything else is grader.cli."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["check"]:
        _start_check(argv[1:])
    elif argv[:1] == ["watch"]:
        _start_daemon()
    from grader import cli

    return cli.main(argv)


def _start_check(args: list[str]) -> None:
    """Begin grading what `devcourse check ARGS` grades, if that is clear without the rest of the tool; grader.cli
    then finds the result waiting (grader.engine.runner.grade_soon). Anything unusual is left to grader.cli."""
    _start_daemon()  # first: on a cold start, its import of torch is what the check waits for
    from grader.learner import targets, workspace
    from grader.engine import runner

    if workspace.find_course_folder() is None:
        return  # grader.cli says what a course folder is

    parser = argparse.ArgumentParser(add_help=False)
    targets.add_check_arguments(parser)
    try:
        ns, rest = parser.parse_known_args(args)
        if rest or ns.all:
            raise ValueError(rest)
        ex = targets.exercise(ns.name)
        file = targets.check_file(ex, ns)
        if file.is_file():
            runner.grade_soon(targets.with_timeout(ex, ns.timeout), file, ns.device)
            return
    except (Exception, SystemExit):  # noqa: BLE001 - grader.cli will say what is wrong with the command
        pass


def _start_daemon() -> None:
    from grader.engine import daemon

    try:
        daemon.ensure(wait=False)
    except (OSError, daemon.DaemonError):
        pass  # the command itself will start them, or say why it cannot


if __name__ == "__main__":
    sys.exit(main())
