"""Entry point of the `devcourse` command (and `python -m grader`).

A check needs the warm grading processes (grader.daemon). When none is running, this starts them before
anything else, so that their start (importing torch: most of a first check's wait) overlaps the tool's own
imports (rich, the report). Everything else is grader.cli."""

from __future__ import annotations

import sys

GRADING_COMMANDS = ("check", "watch")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in GRADING_COMMANDS and "--help" not in argv and "-h" not in argv:
        from grader import daemon

        try:
            daemon.ensure(wait=False)
        except OSError:
            pass  # the check itself will start them, or say why it cannot
    from grader import cli

    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
