"""The numeric environment settings of the grading engine (README, "Settings"), read and checked in one place.

The grading processes read them when they start, in the background, where a value that is not a number would
end them at import with a traceback in their log. grader.engine.daemon.ensure checks them first, in the command that
asked for a grading, so a bad value stops that command with a message naming the variable; grader.engine.workers,
imported by every front end, reads them leniently (a bad value is the default) so that importing it never fails."""

from __future__ import annotations

import os


class SettingError(ValueError):
    """A setting's value is not one it takes; the message names the variable and what it takes."""


IDLE_VARIABLE = "DEVCOURSE_IDLE_SECONDS"
MAX_JOBS_VARIABLE = "DEVCOURSE_MAX_JOBS"
CHECK_TIMEOUT_VARIABLE = "DEVCOURSE_CHECK_TIMEOUT"  # a class's per-check limit (book/instructors.md)


def idle_seconds(lenient: bool = False) -> float:
    """How long the grading processes wait, idle, before they end (15 minutes unless set)."""
    return _number(IDLE_VARIABLE, 15 * 60.0, float, "a number of seconds above 0", lenient, "900 s")


def max_jobs(lenient: bool = False) -> int:
    """Checks one grading process runs at once, the others waiting (the cores, at least 2, unless set)."""
    default = max(2, os.cpu_count() or 2)
    return _number(MAX_JOBS_VARIABLE, default, int, "a whole number of at least 1", lenient, str(default))


def check_timeout(lenient: bool = False) -> float | None:
    """Seconds each check of a class's grading may take, instead of each exercise's own (None unless set)."""
    return _number(CHECK_TIMEOUT_VARIABLE, None, float, "a number of seconds above 0", lenient,
                   "each exercise's own limit, from course.toml")


def check() -> None:
    """Raise SettingError for the first setting whose value is not one it takes."""
    idle_seconds()
    max_jobs()
    check_timeout()


def _number(variable: str, default, kind, takes: str, lenient: bool, default_text: str):
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not value > 0:  # nan is not above 0 either
        if lenient:
            return default
        raise SettingError(f"{variable} is set to {text!r}, but it takes {takes}. Unset it for the default "
                           f"({default_text}), or give it such a value.")
    return value
