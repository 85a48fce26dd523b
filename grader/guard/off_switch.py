"""DEVCOURSE_ISOLATION=off grades without any confinement by the operating system, to debug the grader: the
sandbox (grader.guard.sandbox) and the PID namespaces (grader.guard.containment) both ask here."""

from __future__ import annotations

import os

OFF_VARIABLE = "DEVCOURSE_ISOLATION"  # "off": grade without isolation (to debug the grader)


def turned_off() -> bool:
    return os.environ.get(OFF_VARIABLE, "").strip().lower() == "off"
