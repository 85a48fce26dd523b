"""Every report agrees with itself (issue 31): for a spread of real gradings through the real `devcourse`
command (a pass, a failure, a grade left incomplete by a simulator limit, a crash, a time-out, a missing
function, a syntax error, an exit, one device, the solution, check --all with and without --device) and the
classroom's verdicts on the same answers, what is printed is read back and held against the --json of the same
check and the exit status: the headline, each cell of the table, the failure blocks, the points and the exit
status say the same thing. No grade says FAILED with 0 failed checks, none says PASSED with exit status 1, no
row says ok next to a failure."""

from __future__ import annotations

import json
import re

import pytest

from grader.learner import report
from grader.engine import runner
from grader.catalog import course
from grader.classroom import blocks
from grader.classroom import report as classroom_report
from tests import report_parsing as parse
from tests.learner import devcourse, exercise_file, fix, make_course_copy

MM = course.get("masked_mean")
PROCESS = report.PROCESS_CHECK

ANSWERS = {  # masked_mean's file for each kind of grading
    "limit": ("import torch\n\ndef masked_mean(x, lengths):\n    if x.device.type != 'cpu':\n"
              "        raise NotImplementedError(\"Could not run 'aten::foo' with arguments from the 'PrivateUse1' "
              "backend\")\n"
              "    mask = (torch.arange(x.shape[1])[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)\n"
              "    return (x * mask).sum(dim=1) / lengths[:, None].to(x.dtype)\n"),
    "crash": "import os\n\ndef masked_mean(x, lengths):\n    os.abort()\n",  # SIGABRT: a native crash
    "endless": "def masked_mean(x, lengths):\n    while True:\n        pass\n",
    "missing": "import torch\n\ndef masked_average(x, lengths):\n    return x.mean(dim=1)\n",
    "syntax": "def masked_mean(x, lengths)\n    return x\n",
    "exits": "import sys\n\ndef masked_mean(x, lengths):\n    sys.exit(3)\n",
    "wrong": "import torch\n\ndef masked_mean(x, lengths):\n    return torch.zeros(x.shape[0], x.shape[2], device=x.device)\n",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_course_copy(tmp_path_factory.mktemp("agreement"))


def agree(out, data: dict, ex: course.Exercise) -> parse.Printed:
    """The printed grade, its --json and its exit status say the same, cell by cell."""
    printed = parse.grade(out.stdout)
    results = data["results"]
    checks = [r for r in results if r["check"] != PROCESS]
    process = [r for r in results if r["check"] == PROCESS]
    failed = [r for r in checks if r["outcome"] == "failed"]
    ran = [r for r in checks if r["outcome"] != "skipped"]
    # headline, exit status, points
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert printed.passed == (out.returncode == 0) == data["passed"], (printed.headline, out.returncode)
    assert data["points"] == (ex.points if data["passed"] else 0)
    line = printed.headline
    if printed.passed:
        assert line == (f"PASSED: {ex.name} passes on {', '.join(data['legs'])}. "
                        f"{ex.points} point{'s' if ex.points != 1 else ''}."), line
        assert not failed and not process and ran
        assert not printed.failed_on and not printed.problems and "does not pass" not in out.stdout
    else:
        assert line.startswith(f"FAILED: {ex.name} does not pass yet: "), line
        counted = re.search(r"(\d+) of (\d+) checks failed", line)
        assert bool(counted) == bool(failed), line  # never "0 of N checks failed"
        if counted:
            assert (int(counted[1]), int(counted[2])) == (len(failed), len(ran)), line
        assert ("the grading process had a problem" in line) == bool(process), line
        limits = [r for r in checks if r["outcome"] == "skipped" and r["message"].startswith(runner.SIMULATOR_LIMIT)]
        assert ("the simulated accelerator could not run some checks" in line) == bool(limits), line
        assert ("no check could run" in line) == (not ran and not process), line
    # the table, cell by cell: each result of a check in its row and column, nothing else
    shown = {(title, leg): cell for title, row in printed.rows.items() if title != parse.PROCESS_TITLE
             for leg, cell in row.items()}
    expected = {(report.check_title(r["check"]), r["leg"]): r for r in checks}
    assert set(shown) == set(expected), (sorted(shown), sorted(expected))
    for key, r in expected.items():
        cell = shown[key]
        assert cell.startswith(parse.symbol(r["outcome"])), (key, cell, r["outcome"])
        if r["outcome"] == "skipped":  # "-[n]": note n says why
            assert printed.not_run[int(cell[2:-1])] == (r["message"] or "skipped"), (cell, printed.not_run)
    # a problem of the grading process: its own row, its own block, never a check's
    assert (parse.PROCESS_TITLE in printed.rows) == bool(printed.problems) == bool(process)
    if process:
        assert set(printed.rows[parse.PROCESS_TITLE].values()) == {"FAIL"}
    # the failure blocks name exactly the devices and checks that failed
    assert {leg for legs, _ in printed.failed_on for leg in legs} == {r["leg"] for r in failed}
    for r in failed:
        assert any(report.check_title(r["check"]) in names for _, names in printed.failed_on), r["check"]
    return printed


def check(folder, *args) -> tuple:
    out = devcourse(folder, "check", *args)
    data = json.loads(devcourse(folder, "check", *args, "--json").stdout)
    return out, data


@pytest.mark.parametrize("answer, args, passes", [
    ("shipped", (), False),
    ("fixed", (), True),
    ("limit", (), False),
    ("crash", (), False),
    pytest.param("endless", ("--timeout", "2"), False, marks=pytest.mark.exhaustive),  # test_cli: the endless loop
    ("missing", (), False),
    ("syntax", (), False),
    ("exits", (), False),
    ("wrong", (), False),
    ("shipped", ("--device", "sim:1"), False),
    ("shipped", ("--device", "cpu"), True),
    ("shipped", ("--solution",), True),
])
def test_a_grade_says_the_same_in_its_headline_table_blocks_points_and_exit_status(folder, answer, args, passes):
    file = exercise_file(folder, MM.name)
    if answer == "fixed":
        fix(folder, MM.name)
    elif answer == "shipped":
        file.write_text(MM.exercise_file.read_text())
    else:
        file.write_text(ANSWERS[answer])
    out, data = check(folder, MM.name, *args)
    printed = agree(out, data, MM)
    assert printed.passed is passes, out.stdout  # the spread is what it claims to be
    if answer == "limit":
        assert "could not run some checks" in printed.headline
    if answer in ("crash", "endless", "exits"):
        assert printed.problems or printed.failed_on
    if answer == "crash":
        assert printed.problems and "killed by signal 6" in out.stdout, out.stdout


def _all_agree(out, data: dict, device: str | None) -> None:
    """check --all: each row's cells and result, the count line and the exit status against the --json."""
    columns, rows = parse.all_rows(out.stdout)
    graded = {e["exercise"]: e for e in data["exercises"]}
    assert list(rows) == [e.name for e in course.load()] == list(graded)
    assert data["recorded"] is (device is None)
    for name, (cells, result) in rows.items():
        e = graded[name]
        checks = [r for r in e["results"] if r["check"] != PROCESS]
        failed = [r for r in checks if r["outcome"] == "failed"]
        assert (result == "passed") == e["passed"], (name, result)
        if failed:
            assert result == f"{len(failed)} failed", (name, result, len(failed))
        elif not e["passed"]:
            assert not re.fullmatch(r"\d+ failed", result), (name, result)  # never "0 failed"
        for leg, cell in cells.items():
            on = [r for r in checks if r["leg"] == leg]
            if cell == "ok":  # never next to a failure on that device
                assert not any(r["outcome"] == "failed" for r in on) and any(r["outcome"] == "passed" for r in on), \
                    (name, leg)
            if any(r["outcome"] == "failed" for r in on):
                assert cell == "FAIL", (name, leg, cell)
            if cell == "-":
                assert not any(r["outcome"] in ("passed", "failed") for r in on), (name, leg)
        if failed and not any("+" in r["leg"] for r in failed):
            assert "FAIL" in cells.values(), (name, cells, result)
        if e["passed"]:
            assert "FAIL" not in cells.values() and "ok" in cells.values(), (name, cells)
    passing = sum(e["passed"] for e in data["exercises"])
    assert f"\n{passing} of {len(rows)} exercises pass." in out.stdout
    assert (out.returncode == 0) == data["passed"] == (passing == len(rows))
    assert out.returncode in (0, 1)


@pytest.mark.parametrize("device", [pytest.param(None, marks=pytest.mark.exhaustive), "sim:1"], ids=["every leg", "device sim:1"])
def test_check_all_rows_results_count_and_exit_status_agree(tmp_path, device):
    folder = make_course_copy(tmp_path)
    for ex in course.load()[:3]:
        fix(folder, ex.name)
    args = ("--all",) + (("--device", device) if device else ())
    out = devcourse(folder, "check", *args, timeout=900)
    data = json.loads(devcourse(folder, "check", *args, "--json", timeout=900).stdout)
    _all_agree(out, data, device)
    assert 3 <= sum(e["passed"] for e in data["exercises"]) < len(course.load())  # passes and failures both


# ------------------------------------------------------------------------------------ the classroom
SHIPPED_SPLIT: list = []


def classroom_points(grade: runner.Grade) -> float:
    """What the classroom's test cells give this grade (grader.classroom.blocks, as the kernel and the
    engine's autograde score them)."""
    if not SHIPPED_SPLIT:
        SHIPPED_SPLIT.extend(blocks.split(MM, runner.grade(MM, MM.exercise_file).results))
    return round(sum(b.points for b in SHIPPED_SPLIT if blocks.verdict(MM, grade.results, b.requires)[0]), 6)


@pytest.mark.parametrize("answer", ["shipped", "fixed", "limit", "crash", "missing", "wrong"])
def test_the_classroom_scores_agree_with_the_grade_and_its_self_check(tmp_path, answer):
    file = tmp_path / "answer.py"
    file.write_text({"shipped": MM.exercise_file, "fixed": MM.solution_file}[answer].read_text()
                    if answer in ("shipped", "fixed") else ANSWERS[answer])
    g = runner.grade(MM, file)
    points = classroom_points(g)
    assert (points == MM.points) == g.passed, (answer, points, [(r.check, r.leg, r.outcome) for r in g.results])
    for b in SHIPPED_SPLIT:
        passed, text = blocks.verdict(MM, g.results, b.requires)
        in_block = [r for r in g.ran if blocks.block_of(MM, r.check, r.leg) in b.requires]
        if passed:  # a block passes on checks that ran and passed, every one of them
            assert in_block and all(r.outcome == "passed" for r in in_block), (b, text)
            assert not any(r.check == PROCESS for r in g.results)
        else:
            assert text.startswith(f"{MM.name} does not pass yet"), text
    # the self-check cell shows what devcourse check shows: the same headline for the same grade
    shown = classroom_report.plain(g)
    line = parse.HEADLINE.search(shown).group(0)
    assert line == parse.HEADLINE.search(report.render_text(lambda c: report.print_grade(c, g))).group(0)
    assert line.startswith("PASSED" if g.passed else "FAILED")
