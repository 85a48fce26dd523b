"""The learner's progress, kept in `<state folder>/progress.json` (see grader.workspace), so that they can stop
and resume, start anywhere and skip.

    {"version": 1, "current": "masked_mean", "welcomed": true, "milestones": ["part:Where tensors live"],
     "exercises": {"noise_batch": {"status": "done", "hints": 1, "checks": 3, "gave_up": false}, ...}}

`status` is `done` (the last full check passed), `failing` (the last check failed) or `skipped`; an exercise
that is absent was not started. `hints` is the highest hint shown, `gave_up` that the learner asked for the
solution before passing (its points are not counted). `welcomed` and `milestones` record which of
grader.milestones' texts were said (each is said once). `current` is where the learner is: the next exercise
to do is the first one from there on, in course order, that is neither done nor skipped.

Only a full check of the exercise's own file (`devcourse check NAME`, watch, a notebook's check cell) records
a check; `devcourse reset` forgets the status (the file is broken again). A progress file that cannot be read
is moved aside as `progress.json.corrupt-<time>`, never overwritten, and the learner is told.
"""

from __future__ import annotations

import json
import os
import sys
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
        data, problem, new = {}, None, False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            new = True
        except ValueError as exc:  # not JSON, or not UTF-8
            problem = f"it is not valid JSON: {exc}"
        if problem is None and not isinstance(data, dict):
            problem = "it does not hold an object"
        elif problem is None and data and data.get("version") != VERSION:
            problem = f"it is of another version ({data.get('version')!r}, this course writes {VERSION})"
        if problem:
            data = {}  # start afresh rather than fail, but keep what was there for the learner
            _keep_aside(path, problem)
        data.setdefault("version", VERSION)
        data.setdefault("current", None)
        data.setdefault("exercises", {})
        data.setdefault("welcomed", not new)  # a progress file from before the welcome existed: not a newcomer
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

    def record_check(self, ex: course.Exercise, passed: bool, make_current: bool = True) -> None:
        """A full check of the learner's own code for `ex`: done when it passed, failing when it failed.
        Callers record nothing for a partial check (one --device), the solution, or another file.
        `make_current`: the exercise becomes the current one (not for check --all, which picks it after)."""
        entry = self.entry(ex.name)
        fields = {"checks": entry.get("checks", 0) + 1, "last_check": time.strftime("%Y-%m-%dT%H:%M:%S")}
        if passed:
            fields.update(status=DONE, passed_once=True)
        else:
            fields.update(status=FAILING)
        if make_current:
            self.data["current"] = ex.name
        self._update(ex.name, **fields)

    def make_current(self, ex: course.Exercise) -> None:
        self.data["current"] = ex.name
        self.save()

    def forget_status(self, ex: course.Exercise) -> None:
        """The exercise's file was restored as shipped: it is not done (nor failing) any more."""
        if self.status(ex.name) in (DONE, FAILING):
            self.data["exercises"][ex.name].pop("status")
            self.save()

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


def _keep_aside(path: Path, problem: str) -> None:
    """Move an unreadable progress file aside (never lose it), and tell the learner where it is."""
    backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
    try:
        os.replace(path, backup)
    except OSError as exc:
        print(f"Your progress file {workspace.shown(path)} cannot be read ({problem}) nor moved aside ({exc}); "
              "fix or delete it: until then your progress is not saved.", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"Your progress file {workspace.shown(path)} could not be read ({problem}). It is kept as "
          f"{workspace.shown(backup)}; your progress starts afresh.", file=sys.stderr)
