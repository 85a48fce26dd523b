"""The learner's progress (grader.learner.progress) and the classroom's points blocks (grader.classroom.blocks) in
process, value by value: what the commands of tests/test_cli.py, test_newcomer.py and the classroom loop of
test_classroom.py rely on, checked exactly here so that a changed value is seen in a second, not only
through a subprocess. (Written for the mutation report, issue 31: each test fails on a mutant that survived
the end-to-end tests' shapes.)"""

from __future__ import annotations

import json
import os

import pytest

from grader.learner import progress
from grader.catalog import course
from grader.classroom import blocks
from grader.learner.progress import DONE, FAILING, NOT_STARTED, SKIPPED, Progress
from grader.engine.runner import CheckResult

EXERCISES = course.load()
FIRST, SECOND, THIRD = EXERCISES[:3]
LAST = EXERCISES[-1]


@pytest.fixture
def path(tmp_path):
    return tmp_path / "state" / "progress.json"


def saved(path) -> dict:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------------ progress: reading
def test_a_new_progress_is_empty_and_marks_a_newcomer(path):
    p = Progress.load(path)
    assert p.data == {"version": 2, "current": None, "exercises": {}, "welcomed": False}
    assert not path.exists()  # nothing written by reading
    assert p.status(FIRST.name) == NOT_STARTED == "not started"
    assert (p.gave_up(FIRST.name), p.ever_passed(FIRST.name), p.hints_seen(FIRST.name)) == (False, False, 0)
    assert p.next_exercise() == FIRST
    assert p.totals() == (0, len(EXERCISES), 0, sum(e.points for e in EXERCISES))


def test_the_progress_lives_in_the_state_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVCOURSE_STATE_DIR", str(tmp_path / "elsewhere"))
    p = Progress.load()
    assert p.path == tmp_path / "elsewhere" / "progress.json"
    p.skip(FIRST)
    assert Progress.load().status(FIRST.name) == SKIPPED


def test_a_progress_file_from_before_the_welcome_is_not_a_newcomer(path):
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "exercises": {}}))
    assert Progress.load(path).data["welcomed"] is True
    path.write_text(json.dumps({}))  # an empty object: no version, but nothing to lose either
    assert Progress.load(path).data["version"] == 2 and not list(path.parent.glob("*.corrupt-*"))


@pytest.mark.parametrize("content, why", [
    ("{not json", "it is not valid JSON"),
    ("[1, 2]", "it does not hold an object"),
    ('{"version": 3, "exercises": {}}', "it is of another version (3, this course writes 2)"),
    ('{"version": 2, "exercises": [1]}', 'its "exercises" is not an object'),
    (b"\xff\xfe", "it is not valid JSON"),
])
def test_an_unreadable_progress_file_is_moved_aside_and_said(path, capsys, content, why):
    path.parent.mkdir(parents=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    p = Progress.load(path)
    assert p.data["exercises"] == {} and p.data["version"] == 2
    (kept,) = path.parent.glob("progress.json.corrupt-*")
    assert kept.read_bytes() == (content if isinstance(content, bytes) else content.encode())
    err = capsys.readouterr().err
    assert f"could not be read ({why}" in err and kept.name in err and "starts afresh" in err
    # a second bad file in the same second is kept too, under another name
    path.write_text("{again")
    Progress.load(path)
    names = sorted(k.name for k in path.parent.glob("progress.json.corrupt-*"))
    assert len(names) == 2 and any(n.endswith("-2") for n in names), names


def test_a_progress_file_that_cannot_be_moved_aside_stops_with_status_2(path, capsys, monkeypatch):
    path.parent.mkdir(parents=True)
    path.write_text("{bad")

    def refuse(*_):
        raise PermissionError("read-only folder")

    monkeypatch.setattr(progress.os, "replace", refuse)
    with pytest.raises(SystemExit) as stop:
        Progress.load(path)
    assert stop.value.code == 2
    assert "nor moved aside (read-only folder)" in capsys.readouterr().err
    assert path.read_text() == "{bad"


# ------------------------------------------------------------------------------------ progress: writing
def test_each_route_keeps_its_latest_check_and_either_pass_makes_it_done(path):
    p = Progress.load(path)
    p.record_check(SECOND, passed=False)
    entry = saved(path)["exercises"][SECOND.name]
    assert entry["file"]["passed"] is False and entry["file"]["checks"] == 1 and "passed_once" not in entry
    assert entry["status"] == FAILING and saved(path)["current"] == SECOND.name
    p.record_check(SECOND, passed=True, route=progress.NOTEBOOK)
    entry = saved(path)["exercises"][SECOND.name]
    assert entry["status"] == DONE and entry["passed_once"] is True and entry["notebook"]["checks"] == 1
    assert len(entry["notebook"]["last_check"]) == len("2026-01-01T00:00:00")
    assert p.passed_in(SECOND.name) == ["notebook"] and p.result(SECOND.name, "file") is False
    p.record_check(SECOND, passed=False)  # the other route fails again: the notebook's pass stays
    assert p.status(SECOND.name) == DONE and saved(path)["exercises"][SECOND.name]["file"]["checks"] == 2
    p.record_check(SECOND, passed=True)
    assert p.passed_in(SECOND.name) == ["file", "notebook"]
    p.record_check(SECOND, passed=False, route=progress.NOTEBOOK)
    p.record_check(SECOND, passed=False)  # both routes' latest checks failed: failing, the solution unlocked
    assert p.status(SECOND.name) == FAILING and p.ever_passed(SECOND.name) and p.passed_in(SECOND.name) == []
    p.record_check(THIRD, passed=True, chosen=False)  # check --all: the current one stays
    assert saved(path)["current"] == SECOND.name and p.status(THIRD.name) == DONE
    with pytest.raises(ValueError, match="unknown route"):
        p.record_check(THIRD, passed=True, route="elsewhere")


def test_the_next_exercise_is_the_chosen_one_until_done_else_the_first_not_done_nor_skipped(path):
    p = Progress.load(path)
    p.record_check(FIRST, passed=True)
    assert p.next_exercise() == SECOND
    assert p.skip(SECOND) is True
    assert p.status(SECOND.name) == SKIPPED and p.next_exercise() == THIRD
    p.start(LAST)
    assert p.next_exercise() == LAST
    p.record_check(LAST, passed=True)  # the chosen one done: the first one not done nor skipped, in course order
    assert p.next_exercise() == THIRD
    p.record_check(SECOND, passed=False, chosen=False)  # check --all does not end a skip ...
    assert p.status(SECOND.name) == SKIPPED
    p.record_check(SECOND, passed=False)  # ... a check of that exercise does
    assert p.status(SECOND.name) == FAILING and p.next_exercise() == SECOND
    p.skip(SECOND)
    for ex in EXERCISES:
        if p.status(ex.name) == NOT_STARTED:
            p.record_check(ex, passed=True, chosen=False)
    assert p.next_exercise() is None  # done or skipped, every one
    p.start(SECOND)  # back to the skipped one: no longer skipped, and current
    assert p.status(SECOND.name) == FAILING and p.data["current"] == SECOND.name
    assert p.next_exercise() == SECOND
    p.data["current"] = "no_longer_in_the_course"
    assert p.next_exercise() == SECOND


def test_a_skip_never_takes_a_pass_away(path):
    p = Progress.load(path)
    p.record_check(FIRST, passed=True, route=progress.NOTEBOOK)
    before = saved(path)
    assert p.skip(FIRST) is False and saved(path) == before and p.earned(FIRST) == FIRST.points
    p.record_check(SECOND, passed=False)
    assert p.skip(SECOND) is True
    p.record_check(SECOND, passed=True, chosen=False)  # a pass, even from check --all, ends the skip
    assert p.status(SECOND.name) == DONE and "skipped" not in saved(path)["exercises"][SECOND.name]


def test_points_count_done_exercises_not_given_up(path):
    p = Progress.load(path)
    p.give_up(FIRST)  # the solution before passing: recorded, and its points are not counted
    assert saved(path)["exercises"][FIRST.name]["gave_up"] is True
    p.record_check(FIRST, passed=True)
    p.record_check(SECOND, passed=True)
    p.give_up(SECOND)  # after passing: nothing to give up
    assert not p.gave_up(SECOND.name)
    p.record_check(THIRD, passed=False)
    assert (p.earned(FIRST), p.earned(SECOND), p.earned(THIRD)) == (0, SECOND.points, 0)
    assert p.totals() == (2, len(EXERCISES), SECOND.points, sum(e.points for e in EXERCISES))


def test_reset_forgets_the_file_result_only(path):
    p = Progress.load(path)
    p.record_check(FIRST, passed=True)
    p.record_check(SECOND, passed=False)
    p.skip(THIRD)
    p.record_check(LAST, passed=True, route=progress.NOTEBOOK)
    for ex in (FIRST, SECOND, THIRD, LAST):
        p.forget_file_result(ex)
    p.forget_file_result(EXERCISES[3])  # never started: nothing to forget, no entry made
    assert [p.status(e.name) for e in (FIRST, SECOND, THIRD, LAST)] == [NOT_STARTED, NOT_STARTED, SKIPPED, DONE]
    assert EXERCISES[3].name not in saved(path)["exercises"] and saved(path)["exercises"][FIRST.name]["passed_once"]


def test_hints_keep_the_highest_seen(path):
    p = Progress.load(path)
    p.saw_hint(FIRST, 2)
    p.saw_hint(FIRST, 1)
    assert p.hints_seen(FIRST.name) == 2 and saved(path)["exercises"][FIRST.name]["hints"] == 2
    p.saw_hint(FIRST, 3)
    assert saved(path)["exercises"][FIRST.name]["hints"] == 3


def test_the_file_is_written_whole_sorted_and_nothing_else_is_left(path):
    p = Progress.load(path)
    p.skip(FIRST)
    text = path.read_text()
    assert text.endswith("}\n") and json.loads(text) == p.data
    assert text == json.dumps(p.data, indent=1, sort_keys=True) + "\n"
    # the temporary file was renamed, not left; the lock's file stays (removing it would race a waiting writer)
    assert sorted(os.listdir(path.parent)) == ["progress.json", "progress.json.lock"]


# ------------------------------------------------------------------------------------ classroom blocks
MM = course.get("masked_mean")
COST = sorted(blocks.cost_checks(MM.grader_file))


def _plain_checks(ex):
    import ast

    tree = ast.parse(ex.grader_file.read_text())
    return sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
                  and n.name not in blocks.cost_checks(ex.grader_file))


def result(check, leg, outcome="passed", message=""):
    return CheckResult(check, leg, outcome, message)


def test_cost_checks_are_the_tests_that_measure():
    assert COST == ["test_does_not_move_data_back_and_forth"]
    assert "test_runs_on_the_device_of_its_inputs" in _plain_checks(MM)
    assert blocks.cost_checks(course.get("noise_batch").grader_file) == frozenset()


def test_each_result_belongs_to_one_block():
    plain = _plain_checks(MM)[0]
    assert blocks.block_of(MM, plain, "cpu") == "cpu"
    assert blocks.block_of(MM, plain, "sim:1") == "accelerator"
    assert blocks.block_of(MM, plain, "cuda:0") == "accelerator"
    assert blocks.block_of(MM, COST[0], "cpu") == "copies"
    assert blocks.block_of(MM, COST[0] + "[sim:0]", "sim:0") == "copies"  # a parametrized id
    assert blocks.block_of(MM, "(grader process)", "cpu") is None


def test_verdicts_skip_what_did_not_run_and_keep_the_failures():
    plain = _plain_checks(MM)[0]
    results = [result(plain, "cpu"), result(plain, "sim:0", "failed", "wrong"), result(plain, "sim:1", "skipped"),
               result(COST[0], "cpu"), result("(grader process)", "sim", "failed", "died")]
    v = blocks.verdicts(MM, results)
    assert v == {"cpu": [], "accelerator": [results[1]], "copies": [], None: [results[4]]}
    assert blocks.failures_of(MM, results, ("cpu",)) == [results[4]]  # the process fails every block
    assert blocks.failures_of(MM, results[:4], ("cpu", "copies")) == []
    assert blocks.failures_of(MM, results[:4], ("accelerator",)) == [results[1]]


def test_a_split_shares_the_points_of_the_failing_blocks_as_one_two_one():
    ex = course.get("masked_mean")  # 2 points
    plain = _plain_checks(ex)[0]
    every_block_fails = [result(plain, "cpu", "failed"), result(plain, "sim:0", "failed"),
                         result(COST[0], "cpu", "failed")]
    split = blocks.split(ex, every_block_fails)
    assert [(b.name, b.points, b.requires) for b in split] == [
        ("cpu", 0.5, ("cpu",)), ("accelerator", 1.0, ("accelerator",)), ("copies", 0.5, ("copies",))]
    assert [b.grade_id for b in split] == ["masked_mean-cpu", "masked_mean-accelerator", "masked_mean-copies"]
    nothing_fails = [result(plain, "cpu"), result(plain, "sim:0"), result(COST[0], "cpu")]
    assert [(b.name, b.points) for b in blocks.split(ex, nothing_fails)] == [
        ("cpu", 0.5), ("accelerator", 1.0), ("copies", 0.5)]  # every block is then a fix block
    crashes = nothing_fails + [result("(grader process)", "sim", "failed", "died")]
    assert [b.name for b in blocks.split(ex, crashes)] == ["cpu", "accelerator", "copies"]
    accelerator_only = [result(plain, "cpu"), result(plain, "sim:0", "failed"), result(COST[0], "cpu")]
    (only,) = blocks.split(ex, accelerator_only)
    assert (only.name, only.points, only.requires) == ("accelerator", 2, ("accelerator", "cpu", "copies"))
    three = course.get("fit_line")
    odd = blocks.split(three, [result(plain, "cpu", "failed"), result(plain, "sim:0", "failed")])
    assert [(b.name, b.points) for b in odd] == [
        ("cpu", round(three.points - round(three.points * 2 / 3, 2), 2)), ("accelerator", round(three.points * 2 / 3, 2))]


def test_a_verdict_names_each_failed_check_once_or_the_blocks_that_pass():
    plain = _plain_checks(MM)[0]
    ok = [result(plain, "cpu"), result(plain, "sim:0")]
    assert blocks.verdict(MM, ok, ("accelerator", "cpu")) == (
        True, "masked_mean: right on an accelerator, right on the CPU ✓")
    bad = ok + [result(plain, "sim:1", "failed", "on sim:1: wrong"), result(plain, "sim:0", "failed", "on sim:1: wrong"),
                result(COST[0], "sim:1", "failed", "2 copies")]
    passed, text = blocks.verdict(MM, bad, ("accelerator", "cpu"))
    title = plain.removeprefix("test_").replace("_", " ")
    assert not passed
    assert " ".join(text.split()) == ("masked_mean does not pass yet. This test cell requires: right on an "
                                      "accelerator; right on the CPU. Failed: right on an accelerator. Passed: right "
                                      f"on the CPU. {title} on sim:1: on sim:1: wrong")  # which failed (issue 41)
    assert text.splitlines()[-1] == f"  {title} on sim:1: on sim:1: wrong"
    assert max(len(line) for line in text.splitlines()) <= blocks.VERDICT_WIDTH
    cpu_broken = [result(plain, "cpu", "failed", "wrong on the CPU"), result(plain, "sim:0")]
    assert "Failed: right on the CPU. Passed: right on an accelerator." in " ".join(
        blocks.verdict(MM, cpu_broken, ("accelerator", "cpu"))[1].split())
    passed, text = blocks.verdict(MM, bad, ("copies",))
    assert text.endswith("  does not move data back and forth on sim:1: 2 copies")
    assert blocks.short_title("accelerator") == "right on an accelerator"


def test_cost_checks_find_the_helpers_by_name_or_attribute_once_per_file(tmp_path):
    grader = tmp_path / "test_made_up.py"
    grader.write_text("from grader.engine import expect\nfrom grader.engine.expect import measure\n\n"
                      "def test_by_attribute():\n    expect.no_round_trips(lambda: 0)\n\n"
                      "def test_by_name():\n    with measure():\n        pass\n\n"
                      "def test_other():\n    expect.fail('x')\n\n"
                      "def helper():\n    measure()\n")
    assert blocks.cost_checks(grader) == {"test_by_attribute", "test_by_name"}
    assert blocks.cost_checks(grader) is blocks.cost_checks(grader)  # each grader file is read once


def test_a_block_is_a_value():
    import dataclasses

    (block,) = blocks.split(MM, [result(COST[0], "cpu", "failed")])
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.points = 99


def test_the_first_share_takes_what_rounding_left():
    ex = course.get("masked_mean")  # 2 points over accelerator (2) and copies (1): 1.33 and 0.67, not 1.3
    plain = _plain_checks(ex)[0]
    split = blocks.split(ex, [result(plain, "cpu"), result(plain, "sim:0", "failed"), result(COST[0], "cpu", "failed")])
    assert [(b.name, b.points) for b in split] == [("accelerator", 1.33), ("copies", 0.67)]


def test_the_progress_file_makes_its_folders(tmp_path):
    p = Progress.load(tmp_path / "a" / "b" / "progress.json")
    p.skip(FIRST)
    assert (tmp_path / "a" / "b" / "progress.json").is_file()
