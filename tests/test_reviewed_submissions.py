"""Submissions that a review of 68 alternative fixes (twelfth session) found graded wrongly, graded here on
this machine's legs (the CPU and the simulated devices), by the rules of tests/submissions/: right_*.py passes,
wrong_*.py fails with the phrase of its first line ('# expect: <phrase>'). Each joins tests/submissions/ when
the GPU verdict tables, which cover every file there, are next recorded (tools/on_gpu.sh verdicts)."""

from pathlib import Path

import pytest

from grader import course, runner

REVIEWED = sorted((Path(__file__).parent / "reviewed").glob("*/*.py"))


@pytest.mark.parametrize("path", REVIEWED, ids=[f"{p.parent.name}/{p.stem}" for p in REVIEWED])
def test_reviewed_submission_gets_its_verdict(path):
    grade = runner.grade(course.get(path.parent.name), path)
    messages = [r.message for r in grade.failures]
    if path.stem.startswith("right_"):
        assert grade.passed, messages
        return
    phrase = path.read_text().splitlines()[0].removeprefix("# expect:").strip()
    assert not grade.passed and any(phrase in m for m in messages), (phrase, messages)
