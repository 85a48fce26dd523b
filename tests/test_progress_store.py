"""The progress file as a store that several processes write at once (issue 41): real processes recording
their own exercises at the same moment lose none of each other's, a writer killed in the middle of a write
loses nothing and blocks nobody, and a version 1 file is read and rewritten as version 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from grader.catalog import course
from grader.learner.progress import DONE, FAILING, NOT_STARTED, SKIPPED, Progress

EXERCISES = course.load()
ROUNDS = 5
MINE = 4  # exercises per writer


@pytest.fixture
def path(tmp_path):
    return tmp_path / "state" / "progress.json"


def python(code: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def test_three_processes_writing_at_once_lose_nothing(path):
    # Each writes its own exercises, a check and a hint at a time, and waits on a barrier file so that all
    # three start together: without the lock, a writer's stale snapshot would overwrite the others' entries.
    go = path.parent / "go"
    path.parent.mkdir(parents=True)
    writers = [python(f"""
        import os, time
        from pathlib import Path
        from grader.catalog import course
        from grader.learner.progress import Progress, NOTEBOOK
        exercises = course.load()[{i}::3][:{MINE}]
        while not Path({str(go)!r}).exists():
            time.sleep(0.005)
        for n in range({ROUNDS}):
            for ex in exercises:
                p = Progress.load(Path({str(path)!r}))
                p.record_check(ex, passed=n % 2 == 0, route=NOTEBOOK if {i} == 2 else "file", chosen=False)
                p.saw_hint(ex, n + 1)
        """) for i in range(3)]
    go.touch()
    for w in writers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    data = json.loads(path.read_text())
    for i, ex in enumerate(EXERCISES[:3 * MINE]):
        entry = data["exercises"][ex.name]
        route = "notebook" if i % 3 == 2 else "file"
        assert entry[route]["checks"] == ROUNDS and entry["hints"] == ROUNDS, (ex.name, entry)
        assert entry["status"] == DONE  # ROUNDS is odd: the last check passed
    assert not list(path.parent.glob(".progress-*"))


def test_a_writer_killed_mid_write_loses_nothing_and_blocks_nobody(path):
    p = Progress.load(path)
    p.record_check(EXERCISES[0], passed=True)
    before = path.read_text()
    ready = path.parent / "ready"
    # The writer stops between writing its temporary file and renaming it over the progress file, lock held.
    writer = python(f"""
        import os, time
        from pathlib import Path
        from grader.learner import progress
        from grader.catalog import course
        def stall(*_):
            Path({str(ready)!r}).touch()
            time.sleep(600)
        progress.os.replace = stall
        progress.Progress.load(Path({str(path)!r})).record_check(course.load()[1], passed=True)
        """)
    try:
        for _ in range(6000):
            if ready.exists() or writer.poll() is not None:
                break
            time.sleep(0.01)
        assert ready.exists(), writer.communicate()[1]
        assert list(path.parent.glob(".progress-*.json"))  # its temporary file, complete but not renamed
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert path.read_text() == before  # the file as it was: nothing half-written
    p = Progress.load(path)
    p.record_check(EXERCISES[2], passed=False)  # the lock died with the writer: this one does not wait
    assert (p.status(EXERCISES[0].name), p.status(EXERCISES[1].name)) == (DONE, NOT_STARTED)
    assert p.status(EXERCISES[2].name) == FAILING
    assert not list(path.parent.glob(".progress-*.json"))  # the killed writer's leftover, removed


def test_a_version_1_file_is_read_and_rewritten_as_version_2(path):
    first, second, third, fourth = EXERCISES[:4]
    v1 = {"version": 1, "current": third.name, "welcomed": True, "milestones": ["part:Where tensors live"],
          "exercises": {
              first.name: {"status": "done", "checks": 3, "last_check": "2026-11-01T10:00:00", "passed_once": True,
                           "hints": 2},
              second.name: {"status": "failing", "checks": 1, "last_check": "2026-11-01T11:00:00"},
              third.name: {"status": "skipped", "hints": 1},
              fourth.name: {"gave_up": True, "hints": 3}}}
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(v1))
    p = Progress.load(path)
    assert [p.status(e.name) for e in (first, second, third, fourth)] == [DONE, FAILING, SKIPPED, NOT_STARTED]
    assert p.passed_in(first.name) == ["file"] and p.hints_seen(first.name) == 2 and p.gave_up(fourth.name)
    assert p.next_exercise() == second  # the current one is skipped: the first not done in course order
    assert json.loads(path.read_text()) == v1  # reading changes nothing
    p.saw_hint(fourth, 4)
    data = json.loads(path.read_text())
    assert data["version"] == 2 and data["milestones"] == v1["milestones"] and data["current"] == third.name
    assert data["exercises"][first.name] == {"file": {"passed": True, "checks": 3, "last_check": "2026-11-01T10:00:00"},
                                             "passed_once": True, "hints": 2, "status": DONE}
    assert data["exercises"][second.name]["file"]["passed"] is False
    assert data["exercises"][third.name] == {"skipped": True, "hints": 1, "status": SKIPPED}
    assert data["exercises"][fourth.name]["hints"] == 4
    assert not list(path.parent.glob("*.corrupt-*"))
    assert Progress.load(path).data == p.data  # version 2 reads back as written


def test_the_end_of_a_part_is_said_once_when_its_last_two_exercises_pass_in_two_commands(path):
    # Two commands, each holding a snapshot read before the other's pass: the end of the part is said by the
    # one that records last, and by it only (written from a stale snapshot, it was said by neither).
    from grader.learner import milestones

    part = course.parts()[0]
    in_part = [e for e in EXERCISES if e.chapter in part.chapters]
    *earlier, x, y = in_part
    p = Progress.load(path)
    for ex in earlier:
        p.record_check(ex, passed=True)
    a, b = Progress.load(path), Progress.load(path)
    a.record_check(x, passed=True)
    assert milestones.after_pass(a, x) == []  # y not done yet
    b.record_check(y, passed=True)
    said = milestones.after_pass(b, y)
    assert len(said) == 1 and said[0].startswith(f'End of part "{part.caption}".')
    assert milestones.after_pass(a, x) == [] and milestones.after_pass(Progress.load(path), y) == []
    data = json.loads(path.read_text())
    assert data["milestones"] == [f"part:{part.caption}"]
    assert all(data["exercises"][e.name]["status"] == DONE for e in in_part)


def test_a_lock_held_too_long_stops_the_command_with_a_message(path, monkeypatch, capsys):
    import filelock

    from grader.learner import progress

    monkeypatch.setattr(progress, "LOCK_WAIT", 0.2)
    p = Progress.load(path)
    p.skip(EXERCISES[0])
    before = path.read_text()
    with filelock.FileLock(str(path) + ".lock"):  # as another command would hold it
        with pytest.raises(SystemExit) as stop:
            p.record_check(EXERCISES[1], passed=True)
    assert stop.value.code == 2 and path.read_text() == before
    err = capsys.readouterr().err
    assert "stayed locked by another devcourse command for 0.2 s; nothing was recorded" in err
    assert "progress.json.lock and try again" in err
