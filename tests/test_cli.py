"""`devcourse` in a terminal, driven as a learner would: the real console script in a subprocess, in a copy of
the course folder (tests/learner.py), on broken files, fixed ones, a syntax error, a missing function, an
endless loop and a deleted file; progress, hints, reset, solution, skip; plain output when piped, colours and
tables in a terminal, JSON for scripts."""

from __future__ import annotations

import json
import re

import pexpect
import pytest

from grader.learner import workspace
from grader.catalog import course
from tests.learner import (BOX_CHARACTERS, DEVCOURSE, devcourse, exercise_file, fix, learner_env, make_course_copy,
                           summary_rows)

N = len(course.load())
POINTS = sum(e.points for e in course.load())


@pytest.fixture
def folder(tmp_path):
    return make_course_copy(tmp_path)


def plain(text: str) -> None:
    """Piped output: no escape codes, no box-drawing characters."""
    assert "\x1b" not in text
    assert not BOX_CHARACTERS & set(text), sorted(BOX_CHARACTERS & set(text))


def progress(folder):
    return json.loads((folder / ".devcourse" / "progress.json").read_text())


def test_list_shows_every_exercise_in_order_and_the_next_one(folder):
    out = devcourse(folder, "list")
    assert out.returncode == 0, out.stderr
    plain(out.stdout)
    positions = [out.stdout.index(f" {e.name} ") for e in course.load()]
    assert positions == sorted(positions)
    assert f"0 of {N} exercises done, 0 of {POINTS} points" in out.stdout
    first = course.load()[0]
    assert f"Next: {first.name}" in out.stdout and f"exercises/{first.path}" in out.stdout
    assert "not started" in out.stdout and "tensors-and-devices" in out.stdout


def test_broken_then_fixed(folder):
    out = devcourse(folder, "check", "masked_mean")
    assert out.returncode == 1, out.stdout + out.stderr
    plain(out.stdout)
    assert re.search(r"\| runs on the device of its inputs +\| +ok +\| +FAIL +\| +FAIL +\|", out.stdout), out.stdout
    # each distinct failure once, with the grader's explanation and the learner's line
    assert out.stdout.count("the mask is created on cpu") == 1
    assert "line 21, in masked_mean" in out.stdout
    assert "does not pass yet" in out.stdout and "devcourse hint masked_mean" in out.stdout
    assert progress(folder)["exercises"]["masked_mean"]["status"] == "failing"

    fix(folder, "masked_mean")
    out = devcourse(folder, "check", "masked_mean")
    assert out.returncode == 0, out.stdout
    assert "masked_mean passes on cpu, sim:0, sim:1" in out.stdout
    nxt = course.load()[0]  # the first exercise not done, in course order
    assert f"Next: {nxt.name}" in out.stdout
    out = devcourse(folder, "list")
    assert f"1 of {N} exercises done, {course.get('masked_mean').points} of {POINTS} points" in out.stdout
    assert re.search(r"masked_mean +\| device-mismatch +\| +\d+ \| done", out.stdout)
    assert f"Next: {nxt.name}" in out.stdout


def test_check_without_a_name_checks_the_current_exercise(folder):
    first = course.load()[0]
    out = devcourse(folder, "check")
    assert f"Checking {first.name}" in out.stdout and out.returncode == 1
    assert devcourse(folder, "start", "masked_mean").returncode == 0
    out = devcourse(folder, "check")
    assert "Checking masked_mean" in out.stdout


@pytest.mark.parametrize("source, phrase", [
    ("import torch\n\ndef masked_mean(x, lengths:\n    return x\n", "has a syntax error at line 3"),
    ("import torch\n\ndef masked_average(x, lengths):\n    return x.mean(1)\n", "defines no `masked_mean`"),
    ("import torch\nraise ValueError('oops')\n", "failed before any check could start: ValueError: oops (line 2"),
], ids=["syntax error", "missing function", "crash at import"])
def test_a_broken_file_is_a_failed_check_with_a_reason(folder, source, phrase):
    exercise_file(folder, "masked_mean").write_text(source)
    out = devcourse(folder, "check", "masked_mean")
    assert out.returncode == 1, out.stdout + out.stderr
    assert phrase in out.stdout
    assert out.stdout.count(phrase) == 1  # once, not once per check and leg
    assert "Traceback (most recent call last)" not in out.stdout + out.stderr  # no grader traceback


def test_an_endless_loop_is_stopped_and_located(folder):
    exercise_file(folder, "masked_mean").write_text(
        "def masked_mean(x, lengths):\n    return helper(x)\n\n\ndef helper(x):\n    while True:\n        x = x + 0\n")
    out = devcourse(folder, "check", "masked_mean", "--timeout", "2")
    assert out.returncode == 1
    assert "did not finish within 2 s of CPU time: it kept computing. Look for a loop that never ends." in out.stdout
    assert "wait that never returns" not in out.stdout  # a busy loop is told as a loop (issue 41)
    trace = out.stdout[out.stdout.index("Traceback in exercises/03_mismatch/masked_mean.py"):]
    assert "line 2, in masked_mean" in trace and re.search(r"line [67], in helper", trace)


def test_deleted_file_then_reset(folder):
    exercise_file(folder, "masked_mean").unlink()
    out = devcourse(folder, "check", "masked_mean")
    assert out.returncode == 2
    assert "exercises/03_mismatch/masked_mean.py does not exist" in out.stdout
    assert "devcourse reset masked_mean" in out.stdout
    out = devcourse(folder, "reset", "masked_mean")  # nothing to lose: no question asked
    assert out.returncode == 0, out.stdout
    assert exercise_file(folder, "masked_mean").read_text() == course.get("masked_mean").exercise_file.read_text()
    assert devcourse(folder, "check", "masked_mean").returncode == 1


def snapshot(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_reset_asks_first_and_touches_nothing_else(folder):
    fix(folder, "masked_mean")
    fix(folder, "noise_batch")
    before = snapshot(folder)
    out = devcourse(folder, "reset", "masked_mean", input="n\n")
    assert out.returncode == 0 and "Nothing changed" in out.stdout  # declining is no failure (issue 41)
    assert "Your changes to it will be lost" in out.stdout
    assert snapshot(folder) == before
    out = devcourse(folder, "reset", "masked_mean", input="y\n")
    assert out.returncode == 0, out.stdout
    after = snapshot(folder)
    changed = {p for p in before if before[p] != after.get(p)} | (after.keys() - before.keys())
    assert changed == {exercise_file(folder, "masked_mean")}
    assert after[exercise_file(folder, "masked_mean")].decode() == workspace.shipped_source(course.get("masked_mean"))
    fix(folder, "masked_mean")
    assert devcourse(folder, "reset", "masked_mean", "--yes").returncode == 0
    assert "already as shipped" in devcourse(folder, "reset", "masked_mean").stdout


def test_json_for_editors_and_scripts(folder):
    out = devcourse(folder, "check", "masked_mean", "--json")
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["exercise"] == "masked_mean" and data["passed"] is False
    assert data["file"] == "exercises/03_mismatch/masked_mean.py"
    failed = {(r["check"], r["leg"]) for r in data["results"] if r["outcome"] == "failed"}
    assert ("test_ignores_the_padding", "sim:1") in failed and not any(leg == "cpu" for _, leg in failed)
    assert len(data["failures"]) == 1 and data["failures"][0]["legs"] == ["sim:0", "sim:1"]
    assert data["failures"][0]["trace"][0]["function"] == "masked_mean"
    listing = json.loads(devcourse(folder, "list", "--json").stdout)
    assert listing["total"] == N and listing["next"] == "masked_mean"  # checking it made it the current one
    assert {e["name"]: e["status"] for e in listing["exercises"]}["masked_mean"] == "failing"


def test_what_a_run_shared_by_checks_printed_shows_under_the_check_that_fails(folder):
    # A capstone's checks read one training run, made for the first check (issue 41): a print in the loop,
    # itself a read of the device, fails a later check, whose output and JSON "output" show what it printed.
    fix(folder, "fit_standardized")
    path = exercise_file(folder, "fit_standardized")
    path.write_text(path.read_text().replace("        optimizer.step()\n",
                                             "        optimizer.step()\n        print(\"loss\", loss.item())\n"))
    out = devcourse(folder, "check", "fit_standardized", "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    failed = [r for r in json.loads(out.stdout)["results"] if r["outcome"] == "failed"]
    assert {r["check"] for r in failed} == {"test_python_reads_the_device_once"}, failed
    assert all(re.match(r"loss \d", r["output"].splitlines()[-1]) for r in failed), failed
    out = devcourse(folder, "check", "fit_standardized")
    shown = out.stdout[out.stdout.index("FAILED on sim:0 (python reads the device once)"):]
    assert "Your code printed (python reads the device once, on sim:0):" in shown
    assert re.search(r"\| loss \d", shown)


def test_hints_come_one_level_at_a_time(folder):
    ex = course.get("masked_mean")
    for n in range(1, len(ex.hints) + 1):
        out = devcourse(folder, "hint", "masked_mean")
        assert f"Hint {n} of {len(ex.hints)}" in out.stdout and ex.hints[n - 1][:40] in out.stdout
    assert f"Hint {len(ex.hints)} of" in devcourse(folder, "hint", "masked_mean").stdout  # stays on the last
    assert "Hint 1 of" in devcourse(folder, "hint", "masked_mean", "1").stdout
    out = devcourse(folder, "hint", "masked_mean", "9")
    assert out.returncode == 2 and f"hints 1 to {len(ex.hints)}" in out.stdout


def test_solution_only_after_passing_or_giving_up(folder):
    solution = course.get("masked_mean").solution_file.read_text()
    out = devcourse(folder, "solution", "masked_mean")
    assert out.returncode == 2 and "shown once your fix passes" in out.stdout and "--give-up" in out.stdout
    out = devcourse(folder, "solution", "masked_mean", "--give-up")
    assert out.returncode == 0 and solution.splitlines()[-1].strip() in out.stdout
    assert progress(folder)["exercises"]["masked_mean"]["gave_up"] is True
    fix(folder, "masked_mean")
    assert devcourse(folder, "check", "masked_mean").returncode == 0
    out = devcourse(folder, "list")
    assert "done (file, gave up)" in out.stdout and f"1 of {N} exercises done, 0 of {POINTS} points" in out.stdout
    # a pass unlocks the solution of another exercise without giving up
    fix(folder, "noise_batch")
    assert devcourse(folder, "check", "noise_batch").returncode == 0
    assert devcourse(folder, "solution", "noise_batch").returncode == 0
    assert "gave_up" not in progress(folder)["exercises"]["noise_batch"]


def test_skip_and_start_anywhere(folder):
    first, second = course.load()[:2]
    assert devcourse(folder, "skip").returncode == 0  # the current one
    out = devcourse(folder, "list")
    assert f"Next: {second.name}" in out.stdout and "skipped" in out.stdout
    devcourse(folder, "start", first.name)
    assert f"Next: {first.name}" in devcourse(folder, "list").stdout
    assert devcourse(folder, "start", "no_such_exercise").returncode == 2


def test_a_terminal_gets_colours_and_a_drawn_table(folder):
    text, status = pexpect.run(f"{DEVCOURSE} check masked_mean", cwd=str(folder), env=learner_env(),
                               withexitstatus=True, timeout=120, encoding="utf-8")
    assert status == 1, text
    assert "\x1b[" in text and "╭" in text and "✗" in text and "✓" in text
    assert "does not pass yet" in text


def test_check_all(folder):
    fix(folder, "noise_batch")
    out = devcourse(folder, "check", "--all", "--device", "sim:1", timeout=300)
    assert out.returncode == 1
    plain(out.stdout)
    assert re.search(r"\| +1 \| noise_batch +\| +ok +\| passed", out.stdout), out.stdout
    assert re.search(r"\| +\d+ \| masked_mean +\| +FAIL +\| 4 failed", out.stdout), out.stdout
    assert re.search(rf"\n\d+ of {N} exercises pass\.", out.stdout)
    assert len(summary_rows(out.stdout)) == N  # each row's result agrees with its cells, the count with the rows
    assert "Not recorded in your progress: a check limited to --device sim:1" in out.stdout
    recorded = json.loads((folder / ".devcourse" / "progress.json").read_text())  # it holds the welcome, said
    assert recorded["exercises"] == {} and recorded["current"] is None  # but a partial check records nothing
