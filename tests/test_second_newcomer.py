"""What a second newcomer tripped over (issue 41, points 6 to 9), each driven through the real `devcourse`
command in a copy of the course folder (tests/learner.py): how a checked notebook is named, `list` piped, the
exit status of a declined reset, and the end-of-part messages. The rest of issue 41 is tested beside what it
changed: the time limits' messages in tests/test_cli.py and tests/test_core_units.py, a capstone's prints in
tests/test_cli.py, a notebook's check cell in tests/test_notebooks.py."""

from __future__ import annotations

import json
import shutil

import pytest

from grader import ROOT
from tests.learner import devcourse, make_course_copy


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
