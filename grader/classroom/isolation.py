"""Whether the grading workers are isolated by the operating system, for `devcourse classroom autograde`.

The engine isolates each grading worker where it can (grader.sandbox: no writes outside the worker's own
folder, no network, no other process to signal or trace). A class's grades are only worth that isolation,
so autograding refuses to grade without it unless the instructor says `--unisolated`."""

from __future__ import annotations

from grader.sandbox import Isolation, status  # noqa: F401 - what autograde asks, in its terms below


def refusal(found: Isolation) -> str:
    """The one line autograde says when it will not grade."""
    return (f"Not grading: the grading workers would run without OS isolation ({found.how}), so a submission "
            "could write outside its folder or reach other gradings; grade on a host where isolation works, or "
            "pass --unisolated to grade anyway.")


def warning(found: Isolation) -> str:
    return f"Grading WITHOUT OS isolation (--unisolated; {found.how}): these grades are only as safe as the host."
