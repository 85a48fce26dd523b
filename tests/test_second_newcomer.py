"""What a second newcomer tripped over (issue 41), driven through the real `devcourse` command in a copy of the
course folder (tests/learner.py): how a checked notebook's cell is named, `list` piped, and what the capstone's
first failure gives away. The rest of issue 41 is tested beside what it changed: the time limits' messages
(tests/test_cli.py, tests/test_core_units.py), a capstone's prints and a declined reset (tests/test_cli.py), a
notebook's check cell (tests/test_notebooks.py), the messages' chapters (tests/test_milestones.py), the
classroom (tests/test_classroom.py, tests/test_classroom_units.py), the book (tests/book/test_built_book.py,
tests/test_doctor_scripts.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from grader import ROOT
from grader.catalog import course
from tests.learner import DEVCOURSE, devcourse, learner_env, make_course_copy


@pytest.fixture
def folder(tmp_path):
    return make_course_copy(tmp_path)


def test_a_checked_notebook_cell_is_named_as_the_cell_not_the_grader_copy(folder):
    shutil.copytree(ROOT / "notebooks", folder / "notebooks")
    notebook = "notebooks/03-device-mismatch.ipynb"
    nb = json.loads((folder / notebook).read_text())
    cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith("%%exercise masked_mean"))
    cell["source"] = "%%exercise masked_mean\nimport torch\nraise ValueError('not yet')\n"
    (folder / notebook).write_text(json.dumps(nb))
    for args in ((), ("--json",)):
        out = devcourse(folder, "check", "masked_mean", notebook, *args)
        assert out.returncode == 1, out.stdout + out.stderr
        assert (f"running the %%exercise cell of masked_mean in {notebook} failed before any check could start: "
                "ValueError: not yet (line 3") in out.stdout
        assert ".devcourse" not in out.stdout and str(folder) not in out.stdout


def test_piped_list_keeps_each_row_whole_on_one_line(folder):
    # A console that is not a terminal is 80 columns wide: the current exercise's marker, a long name and a
    # long status made rich cut the name and fold the row (issue 41).
    longest = max(course.load(), key=lambda ex: len(ex.name))
    assert devcourse(folder, "solution", longest.name, "--give-up").returncode == 0
    assert devcourse(folder, "start", longest.name).returncode == 0
    out = subprocess.run([str(DEVCOURSE), "list"], cwd=folder, env={**learner_env(), "COLUMNS": "80"}, text=True,
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if re.match(r"\| +\d+ \|", ln)]
    assert [int(r.split("|")[1]) for r in rows] == [ex.number for ex in course.load()]
    assert all(re.match(rf"\| +{ex.number} \| (> )?{ex.name}( \*)? +\| {ex.chapter} +\|", row)
               for ex, row in zip(course.load(), rows)), out.stdout
    assert len({len(ln) for ln in out.stdout.splitlines() if ln.startswith(("|", "+"))}) == 1  # no row folded


def test_the_capstones_failure_names_the_rule_and_leaves_the_fixes_to_the_hints(folder):
    # The first check of fit_standardized as shipped spelled out all three fixes before any hint (issue 41).
    out = devcourse(folder, "check", "fit_standardized")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Two operands of one operation are on different devices" in out.stdout
    assert "registered buffers" in out.stdout  # the part's rule, which the statistics check names
    for fix_text in ("x.to(device)", "device=", "torch.zeros or torch.ones"):
        assert fix_text not in out.stdout, fix_text
    hint = devcourse(folder, "hint", "fit_standardized", "2")
    assert "x.to(device) returns a new tensor" in hint.stdout and "torch.zeros(n) is made on the CPU" in hint.stdout
