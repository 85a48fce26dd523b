"""The `devcourse` command's own decisions (grader.cli), in process, for the mutation report (issue 31): what is
recorded in the learner's progress, what is printed, and the exit status, for each command. The grading itself
is replaced by a stand-in that passes exactly the reference solution (a real Grade of real CheckResults), so each
test takes milliseconds; the same decisions with the real grader: tests/test_cli.py, test_newcomer.py,
test_report_agreement.py."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from grader import cli
from grader.learner import workspace
from grader.engine import daemon
from grader.catalog import course
from grader.learner.progress import DONE, FAILING, NOTEBOOK, NOT_STARTED, SKIPPED, Progress
from grader.engine.runner import CheckResult, Grade
from tests.learner import BOX_CHARACTERS, exercise_file, fix, make_course_copy

EXERCISES = course.load()
FIRST, SECOND, LAST = EXERCISES[0], EXERCISES[1], EXERCISES[-1]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A learner's course folder (the shipped exercises), the working directory; progress under it."""
    f = make_course_copy(tmp_path)
    monkeypatch.chdir(f)
    monkeypatch.delenv("DEVCOURSE_HOME", raising=False)
    monkeypatch.delenv("DEVCOURSE_STATE_DIR", raising=False)
    return f


@pytest.fixture
def graded(monkeypatch):
    """Stands in for the grader: a file passes exactly when it is the exercise's reference solution. Records
    each call (exercise, file, device)."""
    calls = []

    def grade(ex, file, device=None, timeout=None):
        calls.append((ex.name, Path(file).resolve(), device))
        right = Path(file).read_text() == ex.solution_file.read_text()
        legs = {None: ["cpu", "sim:0"], "cpu": ["cpu"], "sim": ["sim:0"]}[device]
        results = [CheckResult("test_the_result_is_right", leg, "passed" if right else "failed",
                               "" if right else f"the result is wrong on {leg}") for leg in legs]
        return Grade(ex, Path(file).resolve(), results, device=device)

    monkeypatch.setattr(cli, "grade", grade)
    return calls


def run(capsys, *argv, stdin: str | None = None, monkeypatch=None) -> tuple[int, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def progress() -> Progress:
    return Progress.load()


# ------------------------------------------------------------------------------------------------ check
def test_a_passing_check_is_recorded_and_points_at_the_next_exercise(folder, graded, capsys):
    fix(folder, FIRST.name)
    code, out = run(capsys, "check", FIRST.name)
    assert code == 0
    assert f"Checking {FIRST.name} (exercises/{FIRST.path}) ..." in out
    assert f"PASSED: {FIRST.name} passes on cpu, sim:0." in out
    assert f"Next: {SECOND.name} ({SECOND.title}) in exercises/{SECOND.path}: devcourse check {SECOND.name}" in out
    assert "Not recorded" not in out
    prog = progress()
    assert prog.status(FIRST.name) == DONE and prog.passed_in(FIRST.name) == ["file"]
    assert prog.next_exercise() == SECOND
    assert graded == [(FIRST.name, (folder / "exercises" / FIRST.path).resolve(), None)]


def test_a_failing_check_is_recorded_as_failing_and_exits_1(folder, graded, capsys):
    code, out = run(capsys, "check", FIRST.name)
    assert code == 1
    assert f"FAILED: {FIRST.name} does not pass yet: 2 of 2 checks failed." in out
    assert f"Stuck? devcourse hint {FIRST.name}" in out
    assert "Next:" not in out
    assert progress().status(FIRST.name) == FAILING


def test_the_current_exercise_is_checked_when_none_is_named(folder, graded, capsys):
    run(capsys, "start", SECOND.name)
    code, out = run(capsys, "check")
    assert code == 1 and graded[-1][0] == SECOND.name


@pytest.mark.parametrize("how", ["solution", "device", "other file"])
def test_only_a_full_check_of_the_learners_own_file_is_recorded(folder, graded, capsys, how, tmp_path):
    other = tmp_path / "mine.py"
    other.write_text(FIRST.solution_file.read_text())
    argv = {"solution": ["--solution"], "device": ["--device", "cpu"], "other file": [str(other)]}[how]
    code, out = run(capsys, "check", FIRST.name, *argv)
    assert code == (1 if how == "device" else 0)
    why = {"solution": f"you checked the reference solution, not exercises/{FIRST.path}",
           "device": f"a check limited to --device cpu is not a full check (devcourse check {FIRST.name} is)",
           "other file": f"you checked {other}, not exercises/{FIRST.path} nor a notebook's %%exercise "
                         f"{FIRST.name} cell"}[how]
    assert f"Not recorded in your progress: {why}." in out, out
    assert "Next:" not in out  # nothing reached
    assert progress().status(FIRST.name) == NOT_STARTED
    code, out = run(capsys, "check", FIRST.name, *argv, "--json")
    data = json.loads(out)
    assert data["recorded"] is False and data["not_recorded"] == why
    assert progress().status(FIRST.name) == NOT_STARTED


def test_check_json_says_what_was_recorded(folder, graded, capsys):
    code, out = run(capsys, "check", FIRST.name, "--json")
    data = json.loads(out)
    assert code == 1 and data["recorded"] is True and "not_recorded" not in data
    assert data["passed"] is False and data["points"] == 0 and data["exercise"] == FIRST.name
    assert out.startswith('{\n "exercise"')  # indented by one, as documented for scripts
    assert "Checking" not in out and "Welcome" not in out  # JSON only
    fix(folder, FIRST.name)
    code, out = run(capsys, "check", FIRST.name, "--json")
    assert code == 0 and json.loads(out)["passed"] is True
    assert progress().status(FIRST.name) == DONE


def test_check_of_a_missing_file_is_a_usage_error(folder, graded, capsys, tmp_path):
    code, out = run(capsys, "check", FIRST.name, str(tmp_path / "nope.py"))
    assert code == 2 and "nope.py does not exist." in out
    exercise_file(folder, FIRST.name).unlink()
    code, out = run(capsys, "check", FIRST.name)
    assert code == 2
    assert f"exercises/{FIRST.path} does not exist. `devcourse reset {FIRST.name}` restores" in out
    assert graded == []


def test_a_notebook_that_cannot_be_read_is_a_usage_error(folder, graded, capsys, tmp_path):
    nb = tmp_path / "broken.ipynb"
    nb.write_text("{ not json")
    code, out = run(capsys, "check", FIRST.name, str(nb))
    assert code == 2 and "broken.ipynb cannot be read as a notebook" in out and graded == []


def test_the_last_exercise_passing_says_so(folder, graded, capsys):
    for ex in EXERCISES[:-1]:
        run(capsys, "skip", ex.name)
    fix(folder, LAST.name)
    code, out = run(capsys, "check", LAST.name)
    assert code == 0 and "That was the last one: every exercise is done or skipped." in out


# ------------------------------------------------------------------------------------------------ check --all
def test_check_all_records_the_edited_exercises_and_takes_no_other_pass_away(folder, graded, capsys):
    fix(folder, FIRST.name)
    edited = exercise_file(folder, SECOND.name)
    edited.write_text(edited.read_text() + "# tried something\n")
    Progress.load().record_check(LAST, True, NOTEBOOK)  # passed in its notebook; its file is still broken
    broken = exercise_file(folder, LAST.name)
    broken.write_text(broken.read_text() + "# tried something\n")
    Progress.load().record_check(EXERCISES[3], True, chosen=False)  # passed once, its file since put back by hand
    code, out = run(capsys, "check", "--all")
    assert code == 1
    assert [name for name, _, _ in graded] == [ex.name for ex in EXERCISES]
    assert f"checking 1/{len(EXERCISES)} {FIRST.name} ..." in out
    assert f"1 of {len(EXERCISES)} exercises pass." in out
    assert f"See why with: devcourse check NAME (the first failing one: devcourse check {SECOND.name})." in out
    assert "Not recorded" not in out
    prog = progress()
    assert prog.status(FIRST.name) == DONE and prog.status(SECOND.name) == FAILING
    assert prog.status(EXERCISES[2].name) == NOT_STARTED  # as shipped and never checked: not the learner's check
    assert prog.status(EXERCISES[3].name) == FAILING  # as shipped, but checked before: its file fails now
    assert prog.status(LAST.name) == DONE and prog.passed_in(LAST.name) == ["notebook"]
    assert prog.result(LAST.name, "file") is False
    assert prog.next_exercise() == SECOND and prog.data["current"] == LAST.name  # --all chooses nothing
    assert re.search(rf"{LAST.name} .*\| done \(notebook\)", run(capsys, "list")[1])


def test_check_all_on_one_device_records_nothing(folder, graded, capsys):
    fix(folder, FIRST.name)
    code, out = run(capsys, "check", "--all", "--device", "cpu")
    assert code == 1 and {device for _, _, device in graded} == {"cpu"}
    assert ("Not recorded in your progress: a check limited to --device cpu is not a full check (devcourse check "
            "--all is).") in out
    prog = progress()
    assert all(prog.status(ex.name) == NOT_STARTED for ex in EXERCISES)
    assert prog.data.get("current") in (None, FIRST.name)
    code, out = run(capsys, "check", "--all", "--device", "cpu", "--json")
    data = json.loads(out)
    assert code == 1 and data["recorded"] is False and data["passed"] is False and len(data["exercises"]) == len(EXERCISES)
    assert out.startswith('{\n "passed"')


def test_check_all_that_passes_exits_0_and_says_each_milestone_once(folder, graded, capsys):
    for ex in EXERCISES:
        fix(folder, ex.name)
    run(capsys, "start", SECOND.name)
    code, out = run(capsys, "check", "--all", "--device", "cpu")
    assert code == 0 and "End of part" not in out  # not recorded: nothing reached
    code, out = run(capsys, "check", "--all")
    assert code == 0 and f"{len(EXERCISES)} of {len(EXERCISES)} exercises pass." in out
    assert "See why" not in out
    for part in course.parts():
        assert out.count(f'End of part "{part.caption}".') == 1, part.caption
    assert not set(out) & BOX_CHARACTERS  # piped: the milestones as plain text, not in panels
    assert all(progress().status(ex.name) == DONE for ex in EXERCISES)
    assert progress().data["current"] == SECOND.name  # --all moves it only to the first failing exercise
    code, out = run(capsys, "check", "--all", "--json")
    data = json.loads(out)
    assert code == 0 and data == {**data, "passed": True, "recorded": True}


@pytest.mark.parametrize("extra", [[FIRST.name], ["--solution"], [FIRST.name, "x.py"]])
def test_check_all_takes_no_name_file_or_solution(folder, graded, capsys, extra):
    code, out = run(capsys, "check", "--all", *extra)
    assert code == 2 and "check --all grades every exercise file" in out and graded == []


def test_check_all_stops_at_a_missing_file(folder, graded, capsys):
    exercise_file(folder, SECOND.name).unlink()
    code, out = run(capsys, "check", "--all")
    assert code == 2 and f"exercises/{SECOND.path} does not exist." in out


# ------------------------------------------------------------------------------------------------ the others
def test_list_prints_the_exercises_and_json_for_scripts(folder, capsys):
    code, out = run(capsys, "list")
    assert code == 0 and "Welcome" in out  # a newcomer is greeted once
    assert f"0 of {len(EXERCISES)} exercises done" in out and f"Next: {FIRST.name}" in out
    code, out = run(capsys, "list", "--json")
    data = json.loads(out)
    assert code == 0 and out.startswith('{\n "done": 0')
    assert data["next"] == FIRST.name and data["total"] == len(EXERCISES) and data["done"] == 0
    assert data["exercises"][0] == {"number": 1, "name": FIRST.name, "chapter": FIRST.chapter, "title": FIRST.title,
                                    "points": FIRST.points, "capstone": False, "status": NOT_STARTED,
                                    "passed_in": [], "gave_up": False, "file": f"exercises/{FIRST.path}"}
    assert [e["name"] for e in data["exercises"] if e["capstone"]] == [
        e.name for e in EXERCISES if e.title.startswith("Capstone:")] and len(course.parts()) == 5
    code, out = run(capsys, "list")
    capstones = re.findall(r"\| (\w+) \* +\|", out)
    assert capstones == [e["name"] for e in data["exercises"] if e["capstone"]] and len(capstones) == 6, out
    assert "* a capstone: several bugs of its part of the book in one program" in out
    for ex in EXERCISES:
        run(capsys, "skip", ex.name)
    data = json.loads(run(capsys, "list", "--json")[1])
    assert data["next"] is None


def test_the_welcome_comes_once_and_never_in_json(folder, capsys):
    code, out = run(capsys, "list", "--json")
    assert "Welcome" not in out and json.loads(out)
    code, out = run(capsys, "hint", FIRST.name)
    assert out.startswith("Welcome")
    assert "Welcome" not in run(capsys, "hint", FIRST.name)[1]


def test_reset_and_solution_greet_no_one(folder, capsys):
    assert "Welcome" not in run(capsys, "reset", FIRST.name)[1]
    assert "Welcome" not in run(capsys, "solution", FIRST.name, "--give-up")[1]


def test_hint_gives_the_next_hint_then_any_asked(folder, capsys):
    run(capsys, "list")  # past the welcome
    code, out = run(capsys, "hint", FIRST.name)
    assert code == 0 and out.startswith(f"Hint 1 of {len(FIRST.hints)} for {FIRST.name}: {FIRST.hints[0]}")
    code, out = run(capsys, "hint", FIRST.name)
    assert out.startswith(f"Hint 2 of {len(FIRST.hints)}")
    assert progress().hints_seen(FIRST.name) == 2
    last = len(FIRST.hints)
    assert run(capsys, "hint", FIRST.name, str(last))[1].startswith(f"Hint {last} of {last}")
    assert run(capsys, "hint", FIRST.name)[1].startswith(f"Hint {last} of {last}")  # stays at the last
    for n in (0, last + 1):
        code, out = run(capsys, "hint", FIRST.name, str(n))
        assert code == 2 and f"{FIRST.name} has hints 1 to {last}." in out
    assert run(capsys, "hint", FIRST.name, "1")[0] == 0


def test_reset_restores_the_shipped_file_after_asking(folder, capsys, monkeypatch):
    file = exercise_file(folder, FIRST.name)
    code, out = run(capsys, "reset", FIRST.name)
    assert code == 0 and f"exercises/{FIRST.path} is already as shipped; nothing to do." in out
    fix(folder, FIRST.name)
    Progress.load().record_check(FIRST, True)
    code, out = run(capsys, "reset", FIRST.name, stdin="n\n", monkeypatch=monkeypatch)
    assert code == 0 and "Nothing changed." in out and f"Restore exercises/{FIRST.path} as shipped?" in out
    assert file.read_text() == FIRST.solution_file.read_text()
    code, out = run(capsys, "reset", FIRST.name, stdin="", monkeypatch=monkeypatch)  # end of input: no
    assert code == 0 and file.read_text() == FIRST.solution_file.read_text()
    code, out = run(capsys, "reset", FIRST.name, stdin="yes\n", monkeypatch=monkeypatch)
    assert code == 0 and f"Restored exercises/{FIRST.path} as shipped (with its bug); its status is cleared." in out
    assert file.read_text() == workspace.shipped_source(FIRST)
    assert progress().status(FIRST.name) == NOT_STARTED
    fix(folder, FIRST.name)
    assert run(capsys, "reset", FIRST.name, "--yes")[0] == 0 and file.read_text() == workspace.shipped_source(FIRST)
    file.unlink()  # a deleted file is restored without asking
    assert run(capsys, "reset", FIRST.name)[0] == 0 and file.read_text() == workspace.shipped_source(FIRST)


def test_the_solution_waits_for_a_pass_or_a_give_up(folder, capsys):
    code, out = run(capsys, "solution", FIRST.name)
    assert code == 2 and f"the solution of {FIRST.name} is shown once your fix passes" in out
    assert not progress().gave_up(FIRST.name)
    code, out = run(capsys, "solution", FIRST.name, "--give-up")
    assert code == 0 and f"Reference fix of {FIRST.name} ({FIRST.path}):" in out
    assert FIRST.solution_file.read_text() in out  # piped: the file as it is, no line numbers or colours
    assert progress().gave_up(FIRST.name)
    Progress.load().record_check(SECOND, True)
    code, out = run(capsys, "solution", SECOND.name)
    assert code == 0 and not progress().gave_up(SECOND.name)


def test_start_and_skip_move_the_current_exercise(folder, capsys):
    code, out = run(capsys, "start", SECOND.name)
    assert code == 0 and f"Current exercise: {SECOND.name} ({SECOND.title})." in out
    assert progress().data["current"] == SECOND.name
    code, out = run(capsys, "skip")
    assert code == 0 and f"Skipped {SECOND.name}; `devcourse start {SECOND.name}` comes back to it." in out
    assert progress().status(SECOND.name) == SKIPPED
    assert f" Next: {FIRST.name}." in out  # the first not done nor skipped, in course order
    for ex in EXERCISES:
        run(capsys, "skip", ex.name)
    code, out = run(capsys, "skip", LAST.name)
    assert code == 0 and "Next:" not in out
    code, out = run(capsys, "check")
    assert code == 2 and "every exercise is done or skipped" in out


def test_skip_never_takes_a_pass_away(folder, graded, capsys):
    fix(folder, FIRST.name)
    run(capsys, "check", FIRST.name)
    before = progress().totals()
    code, out = run(capsys, "skip", FIRST.name)
    assert code == 0 and f"{FIRST.name} is done: there is nothing to skip, and it keeps its points." in out
    assert progress().status(FIRST.name) == DONE and progress().totals() == before == (1, len(EXERCISES),
                                                                                          FIRST.points, before[3])


def test_stop_says_whether_grading_processes_ran(folder, capsys, monkeypatch):
    monkeypatch.setattr(daemon, "stop", lambda: True)
    code, out = run(capsys, "stop")
    assert code == 0 and "Stopped the grading processes of this course folder." in out
    monkeypatch.setattr(daemon, "stop", lambda: False)
    code, out = run(capsys, "stop")
    assert code == 0 and "No grading processes were running for this course folder." in out


def test_outside_a_course_folder_the_commands_stop_with_status_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEVCOURSE_HOME", raising=False)
    code, out = run(capsys, "list")
    assert code == 2 and "devcourse works in a course folder" in out
    monkeypatch.setattr(daemon, "stop", lambda: False)
    assert run(capsys, "stop")[0] == 0  # needs no course folder


def test_an_unknown_exercise_is_a_usage_error_and_ctrl_c_exits_130(folder, capsys, monkeypatch):
    code, out = run(capsys, "hint", "no_such_exercise")
    assert code == 2 and "no_such_exercise" in out

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_list", interrupted)
    monkeypatch.setattr(cli, "parser", _parser_with(interrupted))
    assert cli.main(["list"]) == 130


def _parser_with(func):
    real = cli.parser

    def parser():
        p = real()
        p._subparsers._group_actions[0].choices["list"].set_defaults(func=func)
        return p

    return parser


def test_a_command_is_required():
    with pytest.raises(SystemExit) as exit_:
        cli.main([])
    assert exit_.value.code == 2


def test_piped_output_is_not_wrapped():
    assert cli.console.soft_wrap is (not cli.console.is_terminal)


def test_in_a_terminal_milestones_are_panels_the_solution_is_highlighted_and_the_count_coloured(
        folder, graded, monkeypatch):
    from rich.console import Console

    terminal = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=100,
                       highlight=False)
    monkeypatch.setattr(cli, "console", terminal)
    for ex in EXERCISES:
        fix(folder, ex.name)
    assert cli.main(["check", "--all"]) == 0
    out = terminal.file.getvalue()
    assert "╭" in out and "End of part" in out  # each milestone in a panel
    assert f"\x1b[1;32m{len(EXERCISES)} of {len(EXERCISES)} exercises pass." in out  # bold green
    exercise_file(folder, FIRST.name).write_text("broken = True\n")
    assert cli.main(["check", "--all"]) == 1
    assert f"\x1b[1;31m{len(EXERCISES) - 1} of {len(EXERCISES)} exercises pass." in terminal.file.getvalue()
    terminal.file.seek(0)
    terminal.file.truncate()
    assert cli.main(["solution", SECOND.name]) == 0
    shown = terminal.file.getvalue()
    assert " 1 \x1b[0m" in shown  # numbered, coloured lines (Syntax)
    longest = max(EXERCISES, key=lambda ex: max(map(len, ex.solution_file.read_text().splitlines())))
    line = max(longest.solution_file.read_text().splitlines(), key=len)
    assert len(line) > 100
    terminal.file.seek(0)
    terminal.file.truncate()
    assert cli.main(["solution", longest.name, "--give-up"]) == 0
    words = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", terminal.file.getvalue()).split())
    assert " ".join(line.split()) in words  # a line wider than the terminal is wrapped (gutter: spaces), not cut


def test_reset_of_an_exercise_without_a_shipped_copy_is_a_usage_error(folder, capsys, monkeypatch):
    def missing(ex):
        raise LookupError(f"no shipped copy of {ex.name} in this installation")

    monkeypatch.setattr(workspace, "shipped_source", missing)
    code, out = run(capsys, "reset", FIRST.name, "--yes")
    assert code == 2 and f"no shipped copy of {FIRST.name} in this installation" in out
