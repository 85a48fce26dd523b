"""The learner's progress, kept in `<state folder>/progress.json` (see grader.learner.workspace), so that they can stop
and resume, start anywhere and skip.

    {"version": 2, "current": "masked_mean", "welcomed": true, "milestones": ["part:Where tensors live"],
     "exercises": {"noise_batch": {"file": {"passed": true, "checks": 3, "last_check": "2026-..."},
                                   "notebook": {"passed": false, "checks": 1, "last_check": "2026-..."},
                                   "status": "done", "hints": 1, "passed_once": true, "gave_up": false}, ...}}

One rule for every route (README, "Your progress"): a full check of the learner's own code for an exercise
records its result under the route it came from, `file` (exercises/<path>: `devcourse check`, `watch`, `check
--all`, which leaves out a file as shipped that was never checked) or `notebook` (the exercise's `%%exercise`
cell: the notebook's check cell, or `devcourse check NAME NOTEBOOK`); each route keeps its latest result. The
exercise is `done` while either route's latest check passed, so a failing check of one route never takes away
the other's pass; else `skipped` when the learner skipped it; else `failing` when a check failed; else `not
started`. `status` in the file is that verdict, rewritten on each write for the reader's convenience. `skip`
never touches a result (a done exercise is not skipped), `devcourse reset` forgets the file route's result.
`hints` is the highest hint shown, `gave_up` that the learner asked for the solution before passing (its points
are not counted). `welcomed` and `milestones` record which of grader.learner.milestones' texts were said (each once).
`current` is the exercise the learner chose (`start`, watch): it is the next one until it is done or skipped;
else the next one is the first in course order that is neither done nor skipped.

Several `devcourse` commands and notebook kernels may write at once: every change re-reads the file under a
lock (a sibling `progress.json.lock`, held only while changing), changes only what its command graded, and
replaces the file by a rename of a complete, synced copy, so that neither a concurrent writer nor a crash or
kill mid-write loses anything. A JSON file rather than SQLite: the learner (and a script) can read it, and
an older file needs no conversion step. A progress file of version 1 is read as version 2 (its status becomes the
file route's result) and written as version 2 on the next change. A file that cannot be read is moved aside
as `progress.json.corrupt-<time>`, never overwritten, and the learner is told.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import filelock

from grader.learner import workspace
from grader.catalog import course

VERSION = 2
DONE, FAILING, SKIPPED, NOT_STARTED = "done", "failing", "skipped", "not started"
FILE, NOTEBOOK = "file", "notebook"
ROUTES = (FILE, NOTEBOOK)
#: Seconds to wait for another command's write (each takes milliseconds) before saying so.
LOCK_WAIT = 60
_TEMPORARY = ".progress-*.json"

T = TypeVar("T")


@dataclass
class Progress:
    path: Path
    data: dict

    # -------------------------------------------------------------------------------------------- reading
    @classmethod
    def load(cls, path: Path | None = None) -> "Progress":
        """A snapshot of the progress, for reading; every change re-reads it under the lock."""
        path = path or workspace.state_dir() / "progress.json"
        data, problem = _read(path)
        if problem:  # keep it aside under the lock, so that two commands do not both move it
            with _locked(path):
                data, problem = _read(path)
                if problem:
                    _keep_aside(path, problem)
                    data = None
        return cls(path, _normalized(data))

    def entry(self, name: str) -> dict:
        return self.data["exercises"].get(name, {})

    def result(self, name: str, route: str) -> bool | None:
        """The latest full check's verdict of `route` for the exercise; None when that route has none."""
        recorded = self.entry(name).get(route)
        return recorded.get("passed") if isinstance(recorded, dict) else None

    def passed_in(self, name: str) -> list[str]:
        """The routes whose latest check passed: where the exercise's pass comes from."""
        return [route for route in ROUTES if self.result(name, route)]

    def status(self, name: str) -> str:
        return _status(self.entry(name))

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
        """The exercise the learner chose (`current`) while it is neither done nor skipped, else the first one
        in course order that is neither; None when every exercise is done or skipped."""
        open_ = [e for e in course.load() if self.status(e.name) not in (DONE, SKIPPED)]
        return next((e for e in open_ if e.name == self.data["current"]), open_[0] if open_ else None)

    # -------------------------------------------------------------------------------------------- writing
    def change(self, edit: Callable[["Progress"], T]) -> T:
        """Apply `edit` to the progress as it is on disk now, under the lock, and write it back; this
        snapshot becomes the result. What `edit` returns is returned."""
        with _locked(self.path):
            data, problem = _read(self.path)
            if problem:
                _keep_aside(self.path, problem)
                data = None
            fresh = Progress(self.path, _normalized(data))
            outcome = edit(fresh)
            _write(self.path, fresh.data)
        self.data = fresh.data
        return outcome

    def _entry_to_change(self, name: str) -> dict:
        return self.data["exercises"].setdefault(name, {})

    def record_check(self, ex: course.Exercise, passed: bool, route: str = FILE, chosen: bool = True) -> None:
        """A full check of the learner's own code for `ex` through `route`: that route's latest result.
        `chosen`: the learner checked this exercise on purpose (not check --all): it becomes the current one
        and is no longer skipped. A pass also ends a skip. Callers record nothing for a partial check (one
        --device), the solution, or another file."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}")

        def edit(p: Progress) -> None:
            entry = p._entry_to_change(ex.name)
            before = entry.get(route, {})
            entry[route] = {"passed": bool(passed), "checks": before.get("checks", 0) + 1,
                            "last_check": time.strftime("%Y-%m-%dT%H:%M:%S")}
            if passed:
                entry["passed_once"] = True
            if passed or chosen:
                entry.pop("skipped", None)
            if chosen:
                p.data["current"] = ex.name

        self.change(edit)

    def forget_file_result(self, ex: course.Exercise) -> None:
        """The exercise's file was restored as shipped: the file route's result no longer holds."""
        def edit(p: Progress) -> None:
            if FILE in p.entry(ex.name):
                p.data["exercises"][ex.name].pop(FILE)

        if FILE in self.entry(ex.name):
            self.change(edit)

    def start(self, ex: course.Exercise) -> None:
        """The learner chose `ex`: it is the current one, and no longer skipped."""
        def edit(p: Progress) -> None:
            p.data["current"] = ex.name
            if ex.name in p.data["exercises"]:
                p.data["exercises"][ex.name].pop("skipped", None)

        self.change(edit)

    def skip(self, ex: course.Exercise) -> bool:
        """Leave `ex` for later; False (and nothing changed) when it is done: a skip never lowers a score."""
        def edit(p: Progress) -> bool:
            if p.status(ex.name) == DONE:
                return False
            p._entry_to_change(ex.name)["skipped"] = True
            return True

        return self.change(edit)

    def saw_hint(self, ex: course.Exercise, n: int) -> None:
        def edit(p: Progress) -> None:
            p._entry_to_change(ex.name)["hints"] = max(n, p.hints_seen(ex.name))

        self.change(edit)

    def give_up(self, ex: course.Exercise) -> None:
        def edit(p: Progress) -> None:
            if not p.ever_passed(ex.name):
                p._entry_to_change(ex.name)["gave_up"] = True

        self.change(edit)

    def say_once(self, due: Callable[["Progress"], list[tuple[str, str]]]) -> list[str]:
        """The texts of `due(progress)` ([(key, text)]) not said before, now recorded as said: each once, even
        when two commands reach the same milestone at the same time."""
        def edit(p: Progress) -> list[str]:
            said = p.data.setdefault("milestones", [])
            new = [(key, text) for key, text in due(p) if key not in said]
            said.extend(key for key, _ in new)
            return [text for _, text in new]

        if all(key in self.data.get("milestones", []) for key, _ in due(self)):
            return []  # nothing new to say: no need to lock and write
        return self.change(edit)

    def welcome_once(self) -> bool:
        """True the first time only (then `welcomed` is recorded)."""
        if self.data.get("welcomed"):
            return False

        def edit(p: Progress) -> bool:
            first = not p.data.get("welcomed")
            p.data["welcomed"] = True
            return first

        return self.change(edit)


# ------------------------------------------------------------------------------------------------ the file
def _status(entry: dict) -> str:
    results = [entry[route].get("passed") for route in ROUTES if isinstance(entry.get(route), dict)]
    if any(results):
        return DONE
    if entry.get("skipped"):
        return SKIPPED
    return FAILING if results else NOT_STARTED


def _read(path: Path) -> tuple[dict | None, str | None]:
    """(the file's data, or None when there is none; why it cannot be used, or None)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except ValueError as exc:  # not JSON, or not UTF-8
        return None, f"it is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, "it does not hold an object"
    if data and data.get("version") not in (1, VERSION):
        return None, f"it is of another version ({data.get('version')!r}, this course writes {VERSION})"
    if not isinstance(data.get("exercises", {}), dict):
        return None, "its \"exercises\" is not an object"
    return data, None


def _from_version_1(entry: dict) -> dict:
    """Version 1 kept one status per exercise, from whichever route checked last: it becomes the file
    route's result (most learners used the terminal); a skip stays a skip."""
    entry = dict(entry)
    status = entry.pop("status", None)
    checks, last = entry.pop("checks", 0), entry.pop("last_check", None)
    if status in (DONE, FAILING):
        entry[FILE] = {"passed": status == DONE, "checks": checks, "last_check": last}
    elif status == SKIPPED:
        entry["skipped"] = True
    return entry


def _normalized(data: dict | None) -> dict:
    new = data is None
    data = dict(data or {})
    if data.get("version") == 1:
        data["exercises"] = {name: _from_version_1(e) for name, e in data.get("exercises", {}).items()}
    data["version"] = VERSION
    data.setdefault("current", None)
    data.setdefault("exercises", {})
    data.setdefault("welcomed", not new)  # a progress file from before the welcome existed: not a newcomer
    return data


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with filelock.FileLock(path.with_name(path.name + ".lock"), timeout=LOCK_WAIT):
            yield
    except filelock.Timeout:
        print(f"Your progress file {workspace.shown(path)} stayed locked by another devcourse command for "
              f"{LOCK_WAIT} s; nothing was recorded. If no other devcourse command or notebook is running, delete "
              f"{workspace.shown(path.with_name(path.name + '.lock'))} and try again.", file=sys.stderr)
        raise SystemExit(2) from None


def _write(path: Path, data: dict) -> None:
    """Replace the file by a complete, synced copy (called under the lock). A temporary file left by a
    writer that was killed mid-write is removed: only the lock's holder writes one."""
    for left in path.parent.glob(_TEMPORARY):
        left.unlink(missing_ok=True)
    for entry in data["exercises"].values():
        entry["status"] = _status(entry)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())  # the rename must not reach the disk before the content
        os.replace(tmp, path)  # a reader sees the old file or the new one, never half of one
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
