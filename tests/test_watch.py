"""`devcourse watch` through a pseudo-terminal, as a learner uses it: a save re-checks, h shows the next hint,
n moves on once the exercise passes, s skips, q quits; --manual re-checks on r only; a deleted file is
reported and picked up again when it comes back."""

from __future__ import annotations

import json
import shutil

import pexpect
import pytest

from grader.catalog import course
from tests.learner import DEVCOURSE, devcourse, exercise_file, fix, learner_env, make_course_copy

NEXT = course.load()[0]  # once masked_mean passes: the first exercise not done, in course order


@pytest.fixture
def folder(tmp_path):
    return make_course_copy(tmp_path)


def watch(folder, *args):
    child = pexpect.spawn(str(DEVCOURSE), ["watch", *args], cwd=str(folder), env=learner_env(), encoding="utf-8",
                          timeout=60, dimensions=(60, 160))
    return child


def quit_(child):
    child.send("q")
    child.expect("Bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_watch_rechecks_on_save_and_moves_on_when_confirmed(folder):
    child = watch(folder, "masked_mean")
    child.expect("does not pass yet")
    child.expect("save it to re-check")
    child.send("h")
    child.expect("Hint 1 of")
    child.send("h")
    child.expect("Hint 2 of")
    child.send("n")  # not before it passes
    child.expect("does not pass yet: fix it first")
    fix(folder, "masked_mean")
    child.expect("masked_mean passes on cpu, sim:0, sim:1")
    child.expect("Press n for the next exercise")
    child.send("n")
    child.expect(f"{NEXT.number}. {NEXT.name}")
    child.expect("does not pass yet")
    child.send("s")  # skip it
    after = course.load()[NEXT.number]  # the first one neither done nor skipped
    child.expect(f"{after.number}. {after.name}")
    quit_(child)
    state = json.loads((folder / ".devcourse" / "progress.json").read_text())
    assert state["exercises"]["masked_mean"]["status"] == "done"
    assert state["exercises"]["masked_mean"]["hints"] == 2
    assert state["exercises"][NEXT.name]["status"] == "skipped"
    assert state["current"] == after.name
    assert f"Next: {after.name}" in devcourse(folder, "list").stdout  # resumes where the learner left off


def test_manual_mode_rechecks_on_r_and_a_deleted_file_comes_back(folder):
    child = watch(folder, "masked_mean", "--manual")
    child.expect("does not pass yet")
    child.expect("press r to re-check")
    exercise_file(folder, "masked_mean").unlink()
    child.send("r")
    child.expect("masked_mean.py does not exist")
    child.expect("devcourse reset masked_mean")
    fix(folder, "masked_mean")
    child.send("r")
    child.expect("masked_mean passes on")
    quit_(child)


def test_watch_sees_a_deleted_file_restored(folder):
    child = watch(folder, "masked_mean")
    child.expect("does not pass yet")
    child.expect("save it to re-check")  # said once the watch is in place
    saved = folder / "saved.py"
    shutil.move(exercise_file(folder, "masked_mean"), saved)
    child.expect("masked_mean.py does not exist")
    assert devcourse(folder, "reset", "masked_mean").returncode == 0
    child.expect("does not pass yet")
    quit_(child)


def test_q_quits_at_once_while_a_check_runs_and_hints_name_the_key(folder):
    exercise_file(folder, "masked_mean").write_text(
        "def masked_mean(x, lengths):\n    while True:\n        pass\n")
    child = watch(folder, "masked_mean", "--timeout", "20")
    child.expect("q quits at once")
    child.send("h")
    child.expect("Hint 1 of")
    child.expect(r"More: press h again \(next: hint 2\)")
    child.send("n")
    child.expect("The check is still running")
    child.send("q")
    child.expect("Bye", timeout=60)
    assert "did not finish within" not in child.before  # it quit without waiting for the check's result
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    assert "devcourse hint" not in child.before


def test_a_failing_check_in_watch_says_the_hint_key(folder):
    child = watch(folder, "masked_mean")
    child.expect("does not pass yet")
    child.expect("Stuck\\? press h for a hint")
    quit_(child)


def test_watch_limited_to_one_device_records_nothing(folder):
    fix(folder, "masked_mean")
    child = watch(folder, "masked_mean", "--device", "sim:1")
    child.expect("masked_mean passes on sim:1")
    child.expect("Not recorded in your progress: a check limited to --device sim:1")
    quit_(child)
    state = json.loads((folder / ".devcourse" / "progress.json").read_text())
    assert "status" not in state["exercises"].get("masked_mean", {})


def _still_beating(beat, wait: float = 60) -> bool:
    """Whether `beat` still changes after `wait` seconds at most: once two looks a second apart agree, no."""
    import time

    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        before = beat.read_text() if beat.exists() else ""
        time.sleep(1)
        if (beat.read_text() if beat.exists() else "") == before:
            return False
    return True


def test_q_stops_the_running_check_too(folder, shared):
    beat = shared / "beat"  # where a grading worker may write
    exercise_file(folder, "masked_mean").write_text(
        f"import itertools, time\n\ndef masked_mean(x, lengths):\n    for i in itertools.count():\n"
        f"        open({str(beat)!r}, 'w').write(str(i))\n        time.sleep(0.05)\n")
    child = watch(folder, "masked_mean", "--timeout", "300")  # left alone, it would run five minutes
    child.expect("q quits at once")
    for _ in range(600):
        if beat.exists():
            break
        child.expect(pexpect.TIMEOUT, timeout=0.1)
    assert beat.exists(), "the check never started"
    child.send("q")
    child.expect("Bye")
    child.expect(pexpect.EOF)
    assert not _still_beating(beat), "the abandoned check still runs"
