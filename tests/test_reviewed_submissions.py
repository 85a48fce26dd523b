"""Alternative submissions from two reviews of the graders (thirteenth session): 156 fixes for 23 exercises,
then 64 for 13 more, graded here on this machine's legs (the CPU and the simulated devices), by the rules of
tests/submissions/: right_*.py passes, wrong_*.py and cheat_*.py fail with the phrase of their first line
('# expect: <phrase>'). Twenty-one of them were graded wrongly and led to fixes of the graders, the
instruments and the simulator. Four more, left unfixed, are not here: a stream's synchronize() per step (twice;
the instruments cannot see it on CUDA), an index-less device left unresolved in find_misplaced, and a training
step without zero_grad (not a device bug). They join tests/submissions/ when the GPU verdict tables, which
cover every file there, are next recorded (tools/on_gpu.sh verdicts): no device time was left to record them
in the session that wrote them."""

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
