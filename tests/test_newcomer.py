"""What a newcomer tripped over (issue 29) and the front end's decisions (issue 31), each driven through the
real `devcourse` command in a copy of the course folder: which checks are recorded as progress, what a notebook
check grades, the course folder, the current exercise after check --all, the learner's own output and the
limits, reset and a corrupt progress file, the messages, and the agreement of headline, table, points and exit
status. Watch mode's q during a check is in tests/test_watch.py."""

from __future__ import annotations

import json
import re
import shutil

import pexpect
import pytest

from grader import ROOT
from grader.learner import report
from grader.engine import limits, runner
from grader.catalog import course
from tests.learner import DEVCOURSE, devcourse, exercise_file, fix, learner_env, make_course_copy, summary_rows

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def folder(tmp_path):
    return make_course_copy(tmp_path)


def progress(folder) -> dict:
    path = folder / ".devcourse" / "progress.json"
    return json.loads(path.read_text()) if path.is_file() else {"exercises": {}, "current": None}


def status(folder, name) -> str | None:
    return progress(folder)["exercises"].get(name, {}).get("status")


def headline(stdout: str) -> str:
    return next(ln for ln in stdout.splitlines() if ln.startswith(("PASSED:", "FAILED:")))


# ------------------------------------------------------------------------------------ what is recorded
def test_a_notebook_is_graded_by_the_exercise_cell_alone_and_recorded_as_the_notebook(folder):
    shutil.copytree(ROOT / "notebooks", folder / "notebooks")
    notebook = "notebooks/01-tensors-and-devices.ipynb"
    fix(folder, "noise_batch")
    assert devcourse(folder, "check", "noise_batch").returncode == 0
    assert status(folder, "noise_batch") == "done"

    out = devcourse(folder, "check", "noise_batch", notebook)  # the notebook's cell still has the bug
    assert out.returncode == 1, out.stdout + out.stderr
    assert "does not run these constructs" not in out.stdout  # the set-up cell is not graded
    assert f"the %%exercise cell of noise_batch in {notebook}" in out.stdout
    assert "pass device= to the function that creates it" in out.stdout
    assert re.search(r"\| noise lands on the requested device +\| +ok +\| +FAIL +\| +FAIL +\|", out.stdout)
    assert "Not recorded" not in out.stdout  # the exercise's cell: the notebook route, as the notebook's own check
    assert status(folder, "noise_batch") == "done"  # a failing check of the notebook did not undo the file's pass
    assert progress(folder)["exercises"]["noise_batch"]["notebook"]["passed"] is False
    assert re.search(r"noise_batch +\| .* \| done \(file\) ", devcourse(folder, "list").stdout)

    # the cell fixed in the notebook passes, with the other exercises' cells still broken
    nb = json.loads((folder / notebook).read_text())
    cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith("%%exercise noise_batch"))
    cell["source"] = "%%exercise noise_batch\n" + course.get("noise_batch").solution_file.read_text()
    (folder / notebook).write_text(json.dumps(nb))
    out = devcourse(folder, "check", "noise_batch", notebook)
    assert out.returncode == 0, out.stdout
    assert "Not recorded in your progress" not in out.stdout and "Next:" in out.stdout
    assert re.search(r"noise_batch +\| .* \| done \(both\) ", devcourse(folder, "list").stdout)
    out = devcourse(folder, "reset", "noise_batch", "--yes")  # the file's pass is forgotten ...
    assert "its status is cleared (noise_batch stays done: its notebook cell passed)." in out.stdout
    assert re.search(r"noise_batch +\| .* \| done \(notebook\) ", devcourse(folder, "list").stdout)  # not this one


def test_a_notebook_without_the_exercise_cell_is_graded_whole(folder, tmp_path):
    mine = tmp_path / "mine.ipynb"
    mine.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": course.get("noise_batch").solution_file.read_text()}]}))
    out = devcourse(folder, "check", "noise_batch", str(mine))
    assert out.returncode == 0, out.stdout
    assert "Not recorded in your progress: you checked" in out.stdout
    assert status(folder, "noise_batch") is None


@pytest.mark.parametrize("args, reason", [
    (("--solution",), "you checked the reference solution, not exercises/03_mismatch/masked_mean.py"),
    (("--device", "cpu"), "a check limited to --device cpu is not a full check"),  # passes: the bug is not there
    (("--device", "sim:1"), "a check limited to --device sim:1 is not a full check"),  # fails
], ids=["solution", "device cpu", "device sim:1"])
def test_only_a_full_check_of_the_own_file_is_recorded(folder, args, reason):
    out = devcourse(folder, "check", "masked_mean", *args)
    assert f"Not recorded in your progress: {reason}" in out.stdout, out.stdout
    assert "Next:" not in out.stdout
    assert "masked_mean" not in progress(folder)["exercises"]
    data = json.loads(devcourse(folder, "check", "masked_mean", *args, "--json").stdout)
    assert data["recorded"] is False and reason in data["not_recorded"]
    assert "masked_mean" not in progress(folder)["exercises"]
    # the exercise's own file, named as FILE, is the exercise's own check
    out = devcourse(folder, "check", "masked_mean", "exercises/03_mismatch/masked_mean.py")
    assert "Not recorded" not in out.stdout and status(folder, "masked_mean") == "failing"


def test_check_all_records_the_edited_exercises_only(folder):
    first, second = course.load()[:2]
    fix(folder, first.name)
    last = exercise_file(folder, course.load()[-1].name)
    last.write_text(last.read_text() + "# an attempt\n")
    out = devcourse(folder, "check", "--all", timeout=600)
    assert out.returncode == 1
    assert f"the first failing one: devcourse check {second.name}" in out.stdout
    assert f"Next: {second.name}" in devcourse(folder, "list").stdout  # the first not done, in course order
    assert status(folder, first.name) == "done" and status(folder, course.load()[-1].name) == "failing"
    assert status(folder, second.name) is None  # untouched: still "not started"
    assert len(summary_rows(out.stdout)) == len(course.load())  # rows, results and count agree


# ------------------------------------------------------------------------------------ the course folder
def test_outside_a_course_folder_every_learner_command_says_what_one_is(tmp_path):
    before = course.get("masked_mean").exercise_file.read_text()
    for args in (("list",), ("check", "masked_mean"), ("hint", "masked_mean"), ("reset", "masked_mean", "--yes")):
        out = devcourse(tmp_path, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert "is not inside a course folder" in out.stdout and "course.toml" in out.stdout
        assert "git clone" in out.stdout and "Traceback" not in out.stdout + out.stderr
    assert course.get("masked_mean").exercise_file.read_text() == before  # the package's copy untouched


def test_a_course_folder_without_course_toml(folder):
    (folder / "course.toml").unlink()
    for args in (("list",), ("check", "masked_mean"), ("hint", "masked_mean")):
        out = devcourse(folder / "exercises", *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert f"{folder} has exercises/ but no course.toml" in out.stdout
        assert "Traceback" not in out.stdout + out.stderr


# ------------------------------------------------------------------------------------ progress
def test_reset_clears_the_status_at_once(folder):
    fix(folder, "masked_mean")
    assert devcourse(folder, "check", "masked_mean").returncode == 0
    assert status(folder, "masked_mean") == "done"
    out = devcourse(folder, "reset", "masked_mean", "--yes")
    assert out.returncode == 0 and "its status is cleared." in out.stdout
    assert status(folder, "masked_mean") == "not started"
    assert progress(folder)["exercises"]["masked_mean"]["passed_once"] is True  # its solution stays unlocked
    assert re.search(r"masked_mean +\| device-mismatch +\| +\d+ \| not started", devcourse(folder, "list").stdout)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"version": 99, "exercises": {}}'],
                         ids=["not json", "not an object", "another version"])
def test_a_corrupt_progress_file_is_kept_aside_and_said(folder, content):
    state = folder / ".devcourse"
    state.mkdir()
    (state / "progress.json").write_text(content)
    out = devcourse(folder, "list")
    assert out.returncode == 0
    backups = list(state.glob("progress.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_text() == content
    assert "could not be read" in out.stderr and f".devcourse/{backups[0].name}" in out.stderr
    assert devcourse(folder, "hint", "masked_mean").returncode == 0  # a fresh file from here on
    assert progress(folder)["exercises"]["masked_mean"]["hints"] == 1
    assert len(list(state.glob("progress.json.corrupt-*"))) == 1


# ------------------------------------------------------------------------------------ the learner's output
def test_what_the_code_printed_is_shown_on_failure(folder):
    exercise_file(folder, "noise_batch").write_text(
        "import torch\n\ndef make_noise_batch(b, f, device):\n    print('the device I got:', device)\n"
        "    for i in range(40):\n        print('step', i)\n    return torch.randn(b, f)\n")
    out = devcourse(folder, "check", "noise_batch")
    assert out.returncode == 1
    assert "Your code printed (noise lands on the requested device, on sim:0):" in out.stdout, out.stdout
    assert "| step 39" in out.stdout and "| step 10" not in out.stdout  # its end, trimmed
    assert f"earlier lines not shown]" in out.stdout
    result = json.loads(devcourse(folder, "check", "noise_batch", "--json").stdout)["results"][0]
    assert "the device I got:" in result["output"]


@pytest.mark.parametrize("body, phrases", [
    ("print('x' * (100 * 2**20))", ["File too large", "the output limit of grading",
                                    f"{limits.OUTPUT_LIMIT // 2**20} MiB per file"]),
    ("bytearray(50 * 2**30)", ["MemoryError", "the memory limit of grading", limits.describe_memory()]),
], ids=["100 MB printed", "MemoryError"])
def test_a_limit_is_named(folder, body, phrases):
    exercise_file(folder, "noise_batch").write_text(
        "import torch\n\ndef make_noise_batch(b, f, device):\n"
        f"    {body}\n    return torch.randn(b, f, device=device)\n")
    out = devcourse(folder, "check", "noise_batch")
    assert out.returncode == 1
    for phrase in phrases:
        assert phrase in out.stdout, (phrase, out.stdout)
    assert "Traceback (most recent call last)" not in out.stdout + out.stderr


# ------------------------------------------------------------------------------------ messages
def test_a_failure_grouped_over_devices_names_each_ones_device(folder):
    out = devcourse(folder, "check", "masked_mean")
    assert "FAILED on sim:0, sim:1" in out.stdout
    assert "on sim:0: masked_mean(x, lengths) with both on sim:0 raised" in out.stdout
    assert "(the same on sim:1, each with its own device in the message)" in out.stdout
    assert "keeps the inputs' dtype" in out.stdout  # the possessive survives the function name
    failure = json.loads(devcourse(folder, "check", "masked_mean", "--json").stdout)["failures"][0]
    assert {leg: f"with both on {leg} raised" in text for leg, text in failure["messages"].items()} == {
        "sim:0": True, "sim:1": True}


def test_a_grading_process_problem_is_not_a_check(folder):
    exercise_file(folder, "noise_batch").write_text(
        "import os\n\ndef make_noise_batch(b, f, device):\n    os._exit(0)\n")
    out = devcourse(folder, "check", "noise_batch")
    assert out.returncode == 1
    assert "(grader process)" not in out.stdout and "FAILED on" not in out.stdout
    assert "PROBLEM in the grading process of cpu" in out.stdout
    assert "PROBLEM in the grading process of sim:0, sim:1" in out.stdout
    assert headline(out.stdout) == ("FAILED: noise_batch does not pass yet: the grading process had a problem "
                                    "(see above).")


def test_an_unknown_name_gets_a_did_you_mean(folder):
    out = devcourse(folder, "check", "maskd_mean")
    assert out.returncode == 2
    assert "no exercise named 'maskd_mean': did you mean masked_mean?" in out.stdout
    assert course.load()[-1].name not in out.stdout  # not the whole list
    assert "devcourse list shows" in devcourse(folder, "hint", "zzzz").stdout


def test_a_terminal_wraps_at_words(folder):
    env = {k: v for k, v in learner_env().items() if k != "COLUMNS"}  # the terminal's own width
    text = pexpect.run(f"{DEVCOURSE} check masked_mean", cwd=str(folder), env=env, timeout=120,
                       encoding="utf-8", dimensions=(50, 64))
    lines = ANSI.sub("", text).replace("\r", "").splitlines()
    assert all(len(ln) <= 64 for ln in lines), [ln for ln in lines if len(ln) > 64]
    assert "sim:0" in "\n".join(lines)
    words = {w for ln in lines for w in ln.split()}
    message = "the mask is created on cpu while the input is on sim:0: create helper tensors from x.device."
    assert set(message.split()) <= words, set(message.split()) - words  # each word whole on some line
    assert not any(ln.rstrip().endswith("sim:") for ln in lines)


def test_causal_mask_says_why_it_refuses_what_noise_batch_accepts(folder):
    out = devcourse(folder, "check", "causal_mask")
    assert out.returncode == 1
    assert "this exercise asks for no copy per call (noise_batch asked only where its result lives" in out.stdout
    made_then_moved = ROOT / "tests" / "submissions" / "noise_batch" / "right_made_then_moved.py"
    shutil.copy(made_then_moved, exercise_file(folder, "noise_batch"))
    assert devcourse(folder, "check", "noise_batch").returncode == 0


# ------------------------------------------------------------------------------------ agreement
def _agree(out, data) -> None:
    """The headline, the table, the points and the exit status of one check say the same."""
    line = headline(out.stdout)
    passed = out.returncode == 0
    assert line.startswith("PASSED:") == passed == data["passed"] == (data["points"] > 0), (line, out.returncode)
    fails = len(re.findall(r"\bFAIL\b", out.stdout))
    checks_failed = [r for r in data["results"] if r["outcome"] == "failed" and r["check"] != report.PROCESS_CHECK]
    assert (fails == 0) == (not checks_failed) or not passed
    if passed:
        assert fails == 0
    m = re.search(r"(\d+) of (\d+) checks failed", line)
    if m:
        ran = [r for r in data["results"] if r["outcome"] != "skipped" and r["check"] != report.PROCESS_CHECK]
        assert (int(m[1]), int(m[2])) == (len(checks_failed), len(ran)), line
        assert int(m[1]) > 0, line  # never "0 of N checks failed"
    else:
        assert passed or "grading process" in line or "no check" in line, line


@pytest.mark.parametrize("setup", ["broken", "fixed", "exits", "partial"])
def test_headline_table_points_and_exit_status_agree(folder, setup):
    args = ("check", "masked_mean") + (("--device", "sim:1") if setup == "partial" else ())
    if setup == "fixed":
        fix(folder, "masked_mean")
    if setup == "exits":
        exercise_file(folder, "masked_mean").write_text("import sys\n\ndef masked_mean(x, lengths):\n    sys.exit(3)\n")
    out = devcourse(folder, *args)
    data = json.loads(devcourse(folder, *args, "--json").stdout)
    _agree(out, data)


def test_a_grade_with_no_accelerator_result_says_so():
    ex = course.get("masked_mean")
    g = runner.Grade(ex, ROOT / "exercises" / ex.path, [
        runner.CheckResult("test_ignores_the_padding", "cpu", "passed"),
        runner.CheckResult("test_ignores_the_padding", "sim:0", "skipped", "no device"),
    ])
    text = report.render_text(lambda c: report.print_grade(c, g, "f.py"))
    line = headline(text)
    assert not g.passed and line.startswith("FAILED:")
    assert "checks failed" not in line and "no check ran on an accelerator" in line, line
