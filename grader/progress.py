"""The learner's progress, kept in `<state folder>/progress.json` (see grader.workspace), so that they can stop
and resume, start anywhere and skip.

    {"version": 1, "current": "masked_mean",
     "exercises": {"noise_batch": {"status": "done", "hints": 1, "checks": 3, "gave_up": false}, ...}}

`status` is `done` (the last full check passed), `failing` (the last check failed) or `skipped`; an exercise
that is absent was not started. `hints` is the highest hint shown, `gave_up` that the learner asked for the
solution before passing (its points are not counted). `current` is where the learner is: the next exercise
to do is the first one from there on, in course order, that is neither done nor skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader import course, workspace

VERSION = 1
DONE, FAILING, SKIPPED, NOT_STARTED = "done", "failing", "skipped", "not started"


@dataclass
class Progress:
    path: Path
    data: dict

    # -------------------------------------------------------------------------------------------- reading
    @classmethod
    def load(cls, path: Path | None = None) -> "Progress":
        path = path or workspace.state_dir() / "progress.json"
        data = {}
        with contextlib.suppress(FileNotFoundError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != VERSION:
            data = {}  # unreadable or from another version: start afresh rather than fail
        data.setdefault("version", VERSION)
        data.setdefault("current", None)
        data.setdefault("exercises", {})
        return cls(path, data)

    def entry(self, name: str) -> dict:
        return self.data["exercises"].get(name, {})

    def status(self, name: str) -> str:
        return self.entry(name).get("status", NOT_STARTED)

    def gave_up(self, name: str) -> bool:
        return bool(self.entry(name).get("gave_up"))

    def ever_passed(self, name: str) -> bool:
        return bool(self.entry(name).get("passed_once"))

    def hints_seen(self, name: str) -> int:
        return int(self.entry(name).get("hints", 0))

    def earned(self, ex: course.Exercise) -> int:
        return ex.points if self.status(ex.name) == DONE and not self.gave_up(ex.name) else 0

    def totals(self) -> tuple[int, int, int, int]:
        """(exercises done, exercises, points earned, points)."""
        exercises = course.load()
        return (sum(self.status(e.name) == DONE for e in exercises), len(exercises),
                sum(self.earned(e) for e in exercises), sum(e.points for e in exercises))

    def next_exercise(self) -> course.Exercise | None:
        """The first exercise from `current` on (wrapping around) that is neither done nor skipped; None when
        every exercise is."""
        exercises = list(course.load())
        names = [e.name for e in exercises]
        start = names.index(self.data["current"]) if self.data["current"] in names else 0
        for ex in exercises[start:] + exercises[:start]:
            if self.status(ex.name) not in (DONE, SKIPPED):
                return ex
        return None

    # -------------------------------------------------------------------------------------------- writing
    def _update(self, name: str, **fields) -> None:
        entry = self.data["exercises"].setdefault(name, {})
        entry.update(fields)
        self.save()

    def record_check(self, ex: course.Exercise, passed: bool, complete: bool = True) -> None:
        """A check of the learner's code: done when it passed on every leg (`complete`: not one --device),
        failing when it failed. A passed partial check changes nothing."""
        entry = self.entry(ex.name)
        fields = {"checks": entry.get("checks", 0) + 1, "last_check": time.strftime("%Y-%m-%dT%H:%M:%S")}
        if passed and complete:
            fields.update(status=DONE, passed_once=True)
        elif not passed:
            fields.update(status=FAILING)
        self.data["current"] = ex.name
        self._update(ex.name, **fields)

    def start(self, ex: course.Exercise) -> None:
        self.data["current"] = ex.name
        if self.status(ex.name) == SKIPPED:
            self.data["exercises"][ex.name].pop("status")
        self.save()

    def skip(self, ex: course.Exercise) -> None:
        self._update(ex.name, status=SKIPPED)

    def saw_hint(self, ex: course.Exercise, n: int) -> None:
        self._update(ex.name, hints=max(n, self.hints_seen(ex.name)))

    def give_up(self, ex: course.Exercise) -> None:
        if not self.ever_passed(ex.name):
            self._update(ex.name, gave_up=True)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".progress-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.path)  # a reader never sees half a file
