"""A class's answers of one exercise graded in one batch (grader.engine.batch, as `devcourse classroom autograde` grades
them): one pytest collection per batch and leg family, each answer in a process of its own. An answer of the batch
cannot change the grade of another: the attack below, graded first, rewrites the files of every other answer of
the class where the classroom keeps them (to the fix), signals the batch worker, writes into the batch worker's
descriptors through /proc, and leaves a process behind that keeps rewriting those files while the next answers
are graded. The answers after it must get the grade each gets when graded alone."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from grader import ROOT
from grader.engine import batch, runner
from grader.guard import sandbox
from grader.catalog import course
from grader.classroom import answers, source

MM = course.get("masked_mean")
FIXED = source.solution_code(MM)
ROUND_TRIP = (ROOT / "tests/submissions/masked_mean/wrong_cpu_round_trip.py").read_text()
SHIPPED = source.broken_code(MM)
WHERE_THE_CLASS_IS = "/tmp"  # the classroom's answer files: the system's temporary folder (ClassGrades)
ATTACK = f"""
import os
import pathlib
import time

FIX = {FIXED!r}


def rewrite_the_others():
    for path in pathlib.Path({WHERE_THE_CLASS_IS!r}).glob("devcourse-class-*/*/masked_mean.py"):
        try:
            path.write_text(FIX)
        except OSError:
            pass


rewrite_the_others()
parent = os.getppid()
try:
    descriptors = os.listdir(f"/proc/{{parent}}/fd")
except OSError:
    descriptors = []
for fd in descriptors:
    try:
        with open(f"/proc/{{parent}}/fd/{{fd}}", "w") as f:
            f.write('{{"answer": 1, "graded": {{"results": []}}}}' + chr(10))
    except OSError:
        pass
try:
    os.kill(parent, 9)
except OSError:
    pass
if os.fork() == 0:
    os.setsid()
    while True:
        rewrite_the_others()
        time.sleep(0.05)
""" + FIXED
ISOLATED = sandbox.status()

pytestmark = [
    pytest.mark.skipif(not batch.supported("sim"), reason="no batches here (not fork mode)"),
    pytest.mark.skipif(not ISOLATED.available, reason=f"no isolation here: {ISOLATED.how}"),
]


def outcomes(grade) -> dict:
    return {(r.check, r.leg): r.outcome for r in grade.results}


def test_an_answer_in_a_batch_cannot_change_the_grade_of_the_next_ones(monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", WHERE_THE_CLASS_IS)  # where the attack looks, so it could succeed
    alone = []  # answers the batch did not report, graded again on their own: none may be
    original = runner._grade
    monkeypatch.setattr(runner, "_grade", lambda *a, **kw: alone.append(a) or original(*a, **kw))
    victims = [SHIPPED, ROUND_TRIP, FIXED + "\n# another learner\n"]
    with answers.ClassGrades() as grades:
        futures = grades.submit_all([("masked_mean", ATTACK)] + [("masked_mean", code) for code in victims])
        graded = [f.result() for f in futures]
        files = sorted(Path(WHERE_THE_CLASS_IS).glob(f"{grades._folder.name}/*/masked_mean.py"))
        assert len(files) == 4  # the attack's pattern finds every answer: only the isolation stops it
        assert sorted(f.read_text() for f in files) == sorted([ATTACK, *victims])  # none rewritten
    assert not alone
    attacker, *batchmates = graded
    assert not attacker.passed
    assert any("left" in r.message and "running" in r.message for r in attacker.failures), attacker.failures
    for code, grade in zip(victims, batchmates):
        with tempfile.TemporaryDirectory() as folder:
            file = Path(folder) / "masked_mean.py"
            file.write_text(code)
            by_itself = runner.grade(MM, file)
        assert outcomes(grade) == outcomes(by_itself), code[:60]
        assert [i["isolated"] for i in grade.isolation] == [True, True]
    assert [g.passed for g in batchmates] == [False, False, True]


def test_a_batch_grades_each_answer_as_it_is_graded_alone(tmp_path):
    """The course's own submissions of one exercise, right and wrong: the same outcome on every check and leg in
    a batch as one by one (messages may differ: the checks draw fresh inputs)."""
    files = sorted((ROOT / "tests/submissions/masked_mean").glob("*.py"))[:6] + [MM.exercise_file]
    together = runner.grade_many(MM, files)
    assert [outcomes(g) for g in together] == [outcomes(runner.grade(MM, f)) for f in files]
    assert {g.submission for g in together} == {f.resolve() for f in files}


LEAVES_A_NOTE = FIXED + """

import os
import tempfile

with open(os.path.join(tempfile.gettempdir(), "note.txt"), "w") as f:  # its own private folder: allowed
    f.write("a note from the answer before")
# where it was, for the next answer of its batch (one batch per leg family, graded at once: one note each)
with open(os.path.join(SHARED, os.path.basename(os.path.dirname(tempfile.gettempdir()))), "w") as f:
    f.write(tempfile.gettempdir())
"""
READS_THE_NOTE = FIXED + """

import os
import tempfile

_above = os.path.dirname(tempfile.gettempdir())  # the batch worker's folder, where each answer's folder is made
try:
    _folders = os.listdir(_above)
except PermissionError:  # the read allow-list refuses it: the folder of the answer before is out of reach anyway
    _folders = []
for _folder in _folders:
    _note = os.path.join(_above, _folder, "note.txt")
    if os.path.isfile(_note):
        raise RuntimeError("read " + open(_note).read())
with open(os.path.join(SHARED, os.path.basename(_above))) as _f:  # the folder of the answer before, as it said
    _before = _f.read()
if os.path.exists(_before):  # a path is looked up even where its folder may not be read
    raise RuntimeError("the folder of the answer before is still there")
"""


def test_an_answers_private_folder_is_gone_before_the_next_answer_runs(tmp_path, shared):
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(f"SHARED = {str(shared)!r}\n" + LEAVES_A_NOTE)
    second.write_text(f"SHARED = {str(shared)!r}\n" + READS_THE_NOTE)
    graded = runner.grade_many(MM, [first, second])
    assert [g.passed for g in graded] == [True, True], [r.message for g in graded for r in g.failures]
