"""Submissions held in tests/held/ only until GPU verdict rows exist for them (tests/held/README.md): graded here
as tests/test_course.py grades tests/submissions/, so that they keep the verdict they will be recorded with.
right_*.py pass on every leg; wrong_*.py fail with the phrase of their '# expect:' line."""

import pytest

from grader import ROOT
from grader.engine import runner
from grader.catalog import course

TAG = "# held for: GPU verdict rows"
HELD = sorted(p for p in (ROOT / "tests" / "held").glob("*/*.py")
              if any(line.startswith(TAG) for line in p.read_text().splitlines()[:3]))


def test_the_files_waiting_for_gpu_rows_are_listed_in_the_readme():
    readme = (ROOT / "tests" / "held" / "README.md").read_text()
    assert all(f"`{p.parent.name}/{p.name}`" in readme for p in HELD)  # none waits after a GPU run recorded them


@pytest.mark.parametrize("path", HELD, ids=[f"{p.parent.name}/{p.stem}" for p in HELD])
def test_held_submission_gets_its_verdict(path):
    grade = runner.grade(course.get(path.parent.name), path)
    if path.stem.startswith("right_"):
        assert grade.passed, [r for r in grade.results if r.outcome != "passed"]
        return
    first = path.read_text().splitlines()[0]
    assert path.stem.startswith("wrong_") and first.startswith("# expect:"), path
    assert not grade.passed, f"{path.name} passes but should fail"
    phrase = first.removeprefix("# expect:").strip()
    messages = [r.message for r in grade.failures]
    assert any(phrase in m for m in messages), f"{path.name}: no failure says {phrase!r}; got {messages}"
