"""Whether the grading workers are isolated by the operating system, for `devcourse classroom autograde`.

The engine confines each grading where it can (grader.guard.sandbox, grader.guard.containment: reads and writes by
allow-list, no network, a PID namespace of its own, unprivileged). A class's grades are only worth that
confinement, so autograding refuses to grade without all of it unless the instructor says `--unisolated`."""

from __future__ import annotations

from grader.guard.sandbox import Isolation, status  # noqa: F401 - what autograde asks, in its terms below


def refusal(found: Isolation) -> str:
    """The one line autograde says when it will not grade."""
    return (f"Not grading: the grading workers would run without full OS isolation ({found.how}), so a "
            "submission could read or change other gradings or outlive its own; grade on a host where isolation "
            "works, or pass --unisolated to grade anyway.")


def warning(found: Isolation) -> str:
    return f"Grading WITHOUT OS isolation (--unisolated; {found.how}): these grades are only as safe as the host."
