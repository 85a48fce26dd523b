"""grader.learner.report in process, value by value: the titles, columns, groups of failures, cells, notes, headlines,
JSON, list and --all tables that `devcourse check`, watch and the notebooks print. tests/test_report_agreement.py
holds real gradings' output against their --json and exit status; these pin each piece exactly on made-up
results, so that the mutation run (issue 31) sees a changed value in a second."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console

from grader.learner import report
from grader.catalog import course
from grader.learner.progress import Progress
from grader.engine.runner import SIMULATOR_LIMIT, CheckResult, Grade

MM = course.get("masked_mean")
ONE = dataclasses.replace(MM, points=1)
P = report.PROCESS_CHECK


def r(check, leg, outcome="passed", message="", trace=(), output=""):
    return CheckResult(check, leg, outcome, message, tuple(trace), output)


def grade(*results, ex=MM, device=None, isolation=()):
    return Grade(ex, MM.exercise_file, list(results), device=device, isolation=list(isolation))


def plain(g, **kw) -> str:
    return report.render_text(lambda c: report.print_grade(c, g, "f.py", **kw))


def fancy_console() -> Console:
    import io

    return Console(file=io.StringIO(), width=120, force_terminal=True, color_system=None, highlight=False)


def cells_of(table) -> list[list[str]]:
    return [[str(col._cells[i]) for col in table.columns] for i in range(table.row_count)]


# ------------------------------------------------------------------------------------ titles, columns
def test_check_titles():
    assert report.check_title("test_keeps_the_inputs_dtype") == "keeps the inputs' dtype"
    assert report.check_title("test_moves_the_parameters_device") == "moves the parameters' device"
    assert report.check_title("test_uses_the_models_device") == "uses the model's device"
    assert report.check_title("test_returns_to_the_callers_device") == "returns to the caller's device"
    assert report.check_title(P) == "the grading process"
    assert report.check_title("plain_name") == "plain name"


def test_columns_are_the_legs_in_device_order():
    g = grade(r("test_a", "sim:1"), r("test_a", "cuda:1"), r("test_a", "sim:0"), r("test_a", "cpu"),
              r("test_a", "mps"), r("test_a", "cuda:0"), r("test_a", "xpu:0"), r("test_b", "sim:0+sim:1"),
              r("test_b", "pair", "skipped"), r("test_a", "odd"))
    assert report.columns(g) == ["cpu", "cuda:0", "cuda:1", "mps", "xpu:0", "sim:0", "sim:1", "sim:0+sim:1", "odd"]
    assert report.columns(grade(r("test_b", "pair", "skipped"), r("test_a", "cpu"))) == ["cpu", "pair"]
    assert report._leg_order("cuda:12") < report._leg_order("sim:0")
    assert report._leg_order("cuda:2") < report._leg_order("cuda:10")


def test_a_grade_with_process_results_only_shows_the_devices_its_processes_stand_for():
    g = grade(r(P, "real", "failed", "died"), r(P, "sim", "failed", "died"))
    assert report.columns(g) == ["cpu", "sim:0", "sim:1"]
    assert report.columns(grade(r(P, "cuda:1", "failed", "x"))) == ["cuda:1"]


# ------------------------------------------------------------------------------------ failures
def test_failures_that_differ_only_by_their_device_are_one():
    g = grade(r("test_a", "cpu"),
              r("test_a", "sim:0", "failed", "x is on cpu, not sim:0", [(3, "f", "y = x")], "printed 0"),
              r("test_a", "sim:1", "failed", "x is on cpu, not sim:1", [(3, "f", "y = x")], "printed 1"),
              r("test_b", "sim:1", "failed", "x is on cpu, not sim:1", [(3, "f", "y = x")]),
              r("test_c", "sim:0", "failed", "another message"))
    first, second = report.failures(g)
    assert first.checks == ["test_a", "test_b"] and first.legs == ["sim:0", "sim:1"]
    assert first.messages == {"sim:0": "x is on cpu, not sim:0", "sim:1": "x is on cpu, not sim:1"}
    assert (first.output, first.output_from) == ("printed 0", "a, on sim:0")
    assert first.trace == ((3, "f", "y = x"),) and not first.of_the_process
    assert second.checks == ["test_c"] and second.message == "another message"


def test_a_failure_raised_by_the_same_line_is_one_whatever_the_grader_called():
    a = r("test_a", "sim:0", "failed", "f(x) with x on sim:0 raised ValueError: bad", [(7, "g", "z")])
    b = r("test_b", "sim:0", "failed", "g(x) with x on sim:0 raised ValueError: bad", [(7, "g", "z")])
    c = r("test_c", "sim:0", "failed", "g(x) with x on sim:0 raised ValueError: bad", [(8, "g", "z")])
    assert [f.checks for f in report.failures(grade(a, b, c))] == [["test_a", "test_b"], ["test_c"]]
    untraced = [r("test_a", "cpu", "failed", "f raised X"), r("test_b", "cpu", "failed", "g raised X")]
    assert len(report.failures(grade(*untraced))) == 2  # without the learner's line: not the same failure


def test_a_process_problem_is_apart_from_the_checks_and_under_its_devices():
    g = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "died"), r(P, "sim", "failed", "died"),
              r(P, "real", "failed", "left 1 process"))
    check, sim, real = report.failures(g)
    assert check.checks == ["test_a"] and not check.of_the_process
    assert sim.of_the_process and sim.legs == ["sim:0"]
    assert real.legs == ["cpu"]


def test_process_columns():
    cols = ["cpu", "cuda:0", "sim:0", "sim:1"]
    assert report._process_columns("sim", cols) == ["sim:0", "sim:1"]
    assert report._process_columns("sim:1", cols) == ["sim:1"]
    assert report._process_columns("cpu", cols) == ["cpu"]
    assert report._process_columns("real", cols) == ["cpu", "cuda:0"]
    assert report._process_columns("accelerators", ["sim:0"]) == ["sim:0"]  # nothing real shown: every column


# ------------------------------------------------------------------------------------ the table
def test_the_table_shows_each_result_in_its_cell_and_a_failure_wins():
    g = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "m"), r("test_a", "sim:1", "skipped", "no sim:1"),
              r("test_b", "cpu", "skipped", "no sim:1"), r("test_b", "sim:0", "skipped", ""),
              r(P, "sim", "failed", "died"))
    plain_rows = cells_of(report.grade_table(report.render_text.__globals__["Console"](), g))
    assert plain_rows == [["a", "ok", "FAIL", "-[1]"],
                          ["b", "-[1]", "-[2]", ""],
                          ["the grading process", "", "FAIL", "FAIL"]]
    fancy = cells_of(report.grade_table(fancy_console(), g))
    assert fancy[0][1:] == ["✓", "✗", "–[1]"]
    assert report.skip_reasons(g) == ["no sim:1", "skipped"]


def test_the_notes_under_the_table():
    sim_only = grade(r("test_a", "cpu"), r("test_a", "sim:0"))
    assert "no GPU on this machine" in report.machine_note(sim_only)
    assert report.machine_note(grade(r("test_a", "cpu"), r("test_a", "sim:0"), r("test_a", "cuda:0"))) is None
    assert report.machine_note(grade(r("test_a", "mps"), r("test_a", "sim:0"))) is None
    assert report.machine_note(grade(r("test_a", "cpu"), r("test_a", "sim:0", "skipped"))) is None
    assert report.machine_note(grade(r("test_a", "cpu"), r(P, "sim", "failed", "x"))) is None
    text = plain(grade(r("test_a", "cpu"), r("test_a", "sim:0", "skipped", "why not"),
                       isolation=[{"spec": "cpu", "isolated": False, "how": "no Landlock"},
                                  {"spec": "sim", "isolated": False, "how": "no Landlock"}]))
    assert "[1] not run: why not" in text and text.count("graded without isolation: no Landlock") == 1


# ------------------------------------------------------------------------------------ failure blocks
def test_trace_lines():
    f = report.Failure("m (line 4, in f: x)", ((4, "f", "x"),))
    assert report._trace_lines(f, "f.py") == []
    f = report.Failure("m", ((4, "f", "x"), (None, "", 3), (9, "g", "")))
    assert report._trace_lines(f, "f.py") == ["Traceback in f.py (most recent call last):", "  line 4, in f",
                                             "    x", "  ... 3 frames of the same kind", "  line 9, in g"]
    assert report._trace_lines(report.Failure("m", ()), "f.py") == []


def test_output_lines_keep_the_end_cut_to_a_width():
    out = "\n".join(f"line {i}" for i in range(20)) + "\n"
    shown = report.output_lines(out)
    assert shown[0] == "[... 5 earlier lines not shown]" and shown[1] == "line 5" and shown[-1] == "line 19"
    assert len(shown) == report.OUTPUT_LINES + 1 == 16
    assert report.output_lines("a\n" * 15) == ["a"] * 15
    wide = report.output_lines("x" * 205)
    assert wide == ["x" * 200 + " [... 5 more characters]"] and report.OUTPUT_WIDTH == 200
    assert report.output_lines("y" * 200) == ["y" * 200]


def test_a_failure_block_names_devices_checks_messages_and_output():
    g = grade(r("test_a", "sim:1", "failed", "on sim:1 wrong\nsecond line", output="hello\n"),
              r("test_a", "sim:0", "failed", "on sim:0 wrong\nsecond line"))
    text = plain(g)
    assert "FAILED on sim:0, sim:1 (a)" in text
    assert "  on sim:0: on sim:0 wrong\n  second line" in text
    assert "(the same on sim:1, each with its own device in the message)" in text
    assert "  Your code printed (a, on sim:1):\n  | hello" in text
    same = plain(grade(r("test_a", "sim:0", "failed", "same"), r("test_a", "sim:1", "failed", "same")))
    assert "\n  same\n" in same and "the same on" not in same and "Your code printed" not in same
    problem = plain(grade(r(P, "sim", "failed", "died")))
    assert "PROBLEM in the grading process of sim:0, sim:1 (the process that runs the checks; not one check)" in problem
    fancy = report.failure_block(fancy_console(), report.failures(g)[0], "f.py")
    assert str(fancy.renderables[0]).startswith("✗ on sim:0, sim:1")


# ------------------------------------------------------------------------------------ the verdict
def test_why_not_passed_gives_each_reason():
    assert report.why_not_passed(grade(r("test_a", "cpu"), r("test_a", "sim:0"))) == []
    assert report.why_not_passed(grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "m"),
                                       r("test_b", "sim:0", "skipped"))) == ["1 of 2 checks failed"]
    assert report.why_not_passed(grade(r("test_a", "cpu"), r(P, "sim", "failed", "x"))) == [
        "the grading process had a problem (see above)"]
    limit = report.why_not_passed(grade(r("test_a", "cpu"), r("test_a", "sim:0"),
                                        r("test_b", "sim:0", "skipped", f"{SIMULATOR_LIMIT} this")))
    assert len(limit) == 1 and limit[0].startswith("the simulated accelerator could not run some checks")
    assert report.why_not_passed(grade()) == ["no check could run on this machine"]
    assert report.why_not_passed(grade(r("test_a", "cpu"), r("test_a", "sim:0", "skipped"))) == [
        "no check ran on an accelerator (skipped: see the notes above), so the device bug is not ruled out"]
    assert report.why_not_passed(grade(r("test_a", "cpu", "skipped"), r("test_a", "sim:0"))) == [
        "no check ran on the CPU (skipped: see the notes above), so the device bug is not ruled out"]
    assert report.why_not_passed(grade(r("test_a", "cpu", "skipped"), r("test_a", "sim:0", "skipped"))) == [
        "no check could run on this machine"]


def test_the_headline():
    passing = grade(r("test_a", "cpu"), r("test_a", "sim:1"), r("test_a", "sim:0"))
    assert plain(passing).rstrip().endswith("PASSED: masked_mean passes on cpu, sim:0, sim:1. 2 points.")
    assert "Stuck?" not in plain(passing, hint_command="devcourse hint masked_mean")
    one = grade(r("test_a", "cpu"), r("test_a", "sim:0"), ex=ONE)
    assert plain(one).rstrip().endswith("passes on cpu, sim:0. 1 point.")
    failing = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "m"))
    text = plain(failing, hint_command="devcourse hint masked_mean")
    assert "FAILED: masked_mean does not pass yet: 1 of 2 checks failed.\nStuck? devcourse hint masked_mean" in text
    assert str(report.verdict(fancy_console(), passing)).startswith("✓ masked_mean")
    assert str(report.verdict(fancy_console(), failing)).startswith("✗ masked_mean")


def test_grade_json():
    g = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "m", [(3, "f", "x")], "out"),
              isolation=[{"spec": "cpu", "isolated": True, "how": "Landlock"}])
    data = report.grade_json(g, "f.py")
    assert (data["exercise"], data["file"], data["passed"], data["points"]) == ("masked_mean", "f.py", False, 0)
    assert data["legs"] == ["cpu", "sim:0"] and data["isolated"] is True
    assert data["results"][1] == {"check": "test_a", "leg": "sim:0", "outcome": "failed", "message": "m",
                                  "output": "out", "trace": [{"line": 3, "function": "f", "code": "x"}]}
    assert data["failures"] == [{"message": "m", "messages": {"sim:0": "m"}, "checks": ["test_a"], "legs": ["sim:0"],
                                 "trace": [{"line": 3, "function": "f", "code": "x"}]}]
    ok = report.grade_json(grade(r("test_a", "cpu"), r("test_a", "sim:0")), "f.py")
    assert ok["passed"] is True and ok["points"] == MM.points and ok["isolated"] is False
    unconfined = grade(r("test_a", "cpu"), r("test_a", "sim:0"), isolation=[{"spec": "cpu", "isolated": False,
                                                                             "how": "off"}])
    assert report.grade_json(unconfined)["isolated"] is False


# ------------------------------------------------------------------------------------ list, --all, hints
def test_progress_bar():
    c = report.render_text.__globals__["Console"](file=None)
    assert str(report.progress_bar(c, 1, 4, width=8)) == "[##------]"
    assert str(report.progress_bar(c, 0, 0, width=4)) == "[####]"
    assert str(report.progress_bar(c, 3, 3, width=4)) == "[####]"
    assert str(report.progress_bar(fancy_console(), 1, 2, width=4)) == "━━━━"


def test_the_list(tmp_path):
    exercises = course.load()
    prog = Progress.load(tmp_path / "progress.json")
    prog.record_check(exercises[0], passed=True)
    prog.give_up(exercises[1])
    prog.skip(exercises[1])
    text = report.render_text(lambda c: report.print_list(c, prog, exercises[2]), width=160)
    assert f"> {exercises[2].name}" in text and f"> {exercises[0].name}" not in text
    assert "skipped (gave up)" in text and "| done (file) " in text
    points = sum(e.points for e in exercises)
    assert f"1 of {len(exercises)} exercises done, {exercises[0].points} of {points} points" in text
    assert f"Next: {exercises[2].name} ({exercises[2].title}): edit " in text
    assert f"devcourse check {exercises[2].name} (or devcourse watch)." in text
    done = report.render_text(lambda c: report.print_list(c, prog, None), width=160)
    assert "Every exercise is done or skipped. Well done!" in done and "> " not in done


def test_the_all_table():
    ok = grade(r("test_a", "cpu"), r("test_a", "sim:0"), r("test_a", "sim:0+sim:1"))
    bad = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", "m"), r("test_b", "sim:0", "failed", "m"))
    crashed = grade(r(P, "real", "failed", "died"), r("test_a", "sim:0"))
    skipped = grade(r("test_a", "cpu"), r("test_a", "sim:0", "skipped"))
    table = report.summary_table(report.render_text.__globals__["Console"](), [ok, bad, crashed, skipped])
    assert [c.header for c in table.columns] == ["#", "exercise", "cpu", "sim:0", "result"]
    rows = cells_of(table)
    assert [row[2:] for row in rows] == [["ok", "ok", "passed"], ["ok", "FAIL", "2 failed"],
                                         ["FAIL", "ok", "the grading process had a problem"],
                                         ["ok", "-", "no check ran on an accelerator"]]
    assert rows[0][:2] == [str(MM.number), "masked_mean"]
    assert cells_of(report.summary_table(fancy_console(), [ok, bad]))[1][2:4] == ["✓", "✗"]


def test_hints():
    ex = MM
    first = str(report.hint_text(ex, 1))
    assert first.startswith(f"Hint 1 of {len(ex.hints)} for masked_mean: {ex.hints[0]}")
    assert first.endswith("More: devcourse hint masked_mean (next: hint 2)")
    assert str(report.hint_text(ex, 1, more="h")).endswith("More: h (next: hint 2)")
    last = str(report.hint_text(ex, len(ex.hints)))
    assert "More:" not in last and ex.hints[-1] in last


@pytest.mark.parametrize("terminal", [True, False])
def test_fancy_only_in_a_terminal_or_a_notebook(terminal):
    import io

    c = Console(file=io.StringIO(), force_terminal=terminal)
    assert report.fancy(c) is terminal
    assert report.fancy(Console(file=io.StringIO(), force_terminal=False, record=True))
    assert report._box(c) is (report.box.ROUNDED if terminal else report.box.ASCII)


def test_a_leg_without_an_index_comes_before_its_indexed_ones():
    assert sorted(["cuda:1", "cuda:0", "cuda"], key=report._leg_order) == ["cuda", "cuda:0", "cuda:1"]


def test_a_failure_block_shows_the_learners_trace_under_the_file_shown():
    g = grade(r("test_a", "sim:0", "failed", "boom", [(3, "f", "y = g(x)"), (8, "g", "return x.cuda()")]))
    text = plain(g)
    assert "  Traceback in f.py (most recent call last):\n    line 3, in f\n      y = g(x)\n    line 8, in g" in text
    unnamed = report.render_text(lambda c: report.print_grade(c, g))  # no file given: the submission's own path
    assert f"Traceback in {report.workspace.shown(MM.exercise_file)} (most recent call last)" in unnamed


def test_plain_text_is_a_hundred_columns_wide():
    g = grade(r("test_" + "very_long_name_" * 8, "cpu"), r("test_b", "sim:0"))
    widths = {len(ln) for ln in plain(g).splitlines() if ln.startswith(("+", "|"))}
    assert widths == {100}, widths


def test_the_list_has_its_headers(tmp_path):
    prog = Progress.load(tmp_path / "progress.json")
    text = report.render_text(lambda c: report.print_list(c, prog, None), width=160)
    assert [c.strip() for c in text.splitlines()[1].strip("|").split("|")] == [
        "#", "exercise", "chapter", "points", "status"]


def test_long_messages_stay_on_one_line_and_html_is_110_columns_wide():
    message = "the tensor is on cpu, " * 15
    g = grade(r("test_" + "very_long_name_" * 8, "cpu"), r("test_a", "sim:0", "failed", message.strip()))
    assert f"  {message.strip()}\n" in plain(g)
    html = report.render_html(lambda c: report.print_grade(c, g, "f.py"))
    import re

    drawn = [ln for ln in re.sub("<[^>]+>", "", html).splitlines() if ln and ln[0] in "╭│├╰"]
    assert drawn and {len(ln) for ln in drawn} == {110}


def test_the_progress_bar_is_30_wide_in_the_list(tmp_path):
    prog = Progress.load(tmp_path / "progress.json")
    text = report.render_text(lambda c: report.print_list(c, prog, None), width=160)
    assert f"[{'-' * 30}] 0 of {len(course.load())} exercises done" in text


def test_an_all_row_names_the_first_reason():
    both = grade(r("test_a", "cpu"), r("test_a", "sim:0", "skipped", f"{SIMULATOR_LIMIT} this"),
                 r(P, "sim", "failed", "died"))
    (row,) = cells_of(report.summary_table(report.render_text.__globals__["Console"](), [both]))
    assert row[-1] == "the grading process had a problem"


def test_failures_naming_a_device_or_a_pair_group_whatever_device_they_name():
    pair = grade(r("test_a", "sim:0+sim:1", "failed", "x moved to sim:0+sim:1"), r("test_b", "sim:0", "failed", "x moved to sim:0"))
    assert [f.checks for f in report.failures(pair)] == [["test_a", "test_b"]]
    named = grade(r("test_a", "cpu", "failed", "x is on cpu"), r("test_a", "mps", "failed", "x is on mps"))
    assert [f.legs for f in report.failures(named)] == [["cpu", "mps"]]


def test_the_table_has_its_header_padded():
    text = plain(grade(r("test_a", "cpu"), r("test_a", "sim:0")))
    assert "\n| check | cpu | sim:0 |\n" in text


def test_a_one_frame_trace_is_shown_unless_the_message_gives_its_line():
    assert report._trace_lines(report.Failure("m", ((4, "f", "x"),)), "f.py") == [
        "Traceback in f.py (most recent call last):", "  line 4, in f", "    x"]
    two = report.Failure("raised (line 4, in f: x)", ((4, "f", "x"), (6, "g", "y")))
    assert len(report._trace_lines(two, "f.py")) == 5


def test_html_is_written_whole_unwrapped_and_nowhere_else(capsys):
    message = "the tensor is on cpu, " * 15
    g = grade(r("test_a", "cpu"), r("test_a", "sim:0", "failed", message.strip()))
    import re

    html = re.sub("<[^>]+>", "", report.render_html(lambda c: report.print_grade(c, g, "f.py")))
    assert message.strip() in html
    assert capsys.readouterr().out == ""


def test_the_next_exercise_is_bold_in_the_list(tmp_path):
    prog = Progress.load(tmp_path / "progress.json")
    nxt = course.load()[0]
    html = report.render_html(lambda c: report.print_list(c, prog, nxt))
    assert f"font-weight: bold\">▶ {nxt.name}" in html
    assert f"font-weight: bold\">  {course.load()[1].name}" not in html


def test_the_machine_note_is_printed_only_when_there_is_one():
    assert "Note: no GPU on this machine" in plain(grade(r("test_a", "cpu"), r("test_a", "sim:0")))
    assert "Note:" not in plain(grade(r("test_a", "cpu"), r("test_a", "cuda:0")))


def test_a_hint_ends_with_the_section_that_explains_it():
    from grader.catalog import book_links

    explained = book_links.explained_line(MM)
    assert explained and explained in str(report.hint_text(MM, 1))
