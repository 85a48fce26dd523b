"""The front ends' decisions that the newcomer tests (tests/test_newcomer.py) and the agreement tests
(tests/test_report_agreement.py) leave open (issue 31), each driven the way a user meets it:

* the daemon: a grading process that dies (a crash of the learner's code, a zygote killed) leaves the next
  check graded, without `devcourse stop`; a daemon started with older grader code is replaced before it grades;
  the end of a dying worker's output (its error line) reaches the message;
* the classroom: a block on which no check ran does not pass; how an exercise's points are split into blocks;
  the learner's kernel scores a test cell on every block it requires (an answer wrong on the CPU alone earns
  nothing, since every block requires the CPU to keep working).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import types

import pytest

from grader import ROOT
from grader.engine import daemon, judging, runner, workers
from grader.catalog import course
from grader.guard import containment
from grader.classroom import blocks, kernel
from tests.learner import devcourse, exercise_file, fix, make_course_copy
from tests.test_daemon import serving, wait_for

MM, NB = course.get("masked_mean"), course.get("noise_batch")
CRASH = "import os\n\ndef masked_mean(x, lengths):\n    os.abort()\n"  # SIGABRT: a native crash

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def own_daemon(tmp_path, monkeypatch):
    """A daemon folder of this test's own (the learner's commands inherit it); checked to be ended after."""
    where = tmp_path / "daemon"
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(where))
    yield where
    daemon.stop(where)
    assert wait_for(lambda: not serving(where), 30), "a process of the test's daemon kept running"


def zygote_pids(where) -> dict[str, int]:
    return {fam: daemon._talk(where, fam, {"ping": True}, timeout=30)["pid"] for fam in workers.FAMILIES}


# ------------------------------------------------------------------------------------ the daemon
def test_after_a_grading_process_dies_the_next_check_is_graded(own_daemon, tmp_path):
    folder = make_course_copy(tmp_path)
    exercise_file(folder, MM.name).write_text(CRASH)
    out = devcourse(folder, "check", MM.name)
    assert out.returncode == 1 and "killed by signal 6" in out.stdout, out.stdout + out.stderr
    fix(folder, MM.name)
    out = devcourse(folder, "check", MM.name)  # the worker died, not the daemon: graded as usual
    assert out.returncode == 0 and "PASSED: masked_mean" in out.stdout, out.stdout + out.stderr

    for pid in zygote_pids(own_daemon).values():  # now the daemon itself dies (the OOM killer, a kill -9)
        os.kill(pid, signal.SIGKILL)
    out = devcourse(folder, "check", MM.name)
    assert out.returncode == 0 and "PASSED: masked_mean" in out.stdout, out.stdout + out.stderr
    exercise_file(folder, MM.name).write_text(MM.exercise_file.read_text())
    out = devcourse(folder, "check", MM.name)  # and it grades, not just passes
    assert out.returncode == 1 and "the mask is created on cpu" in out.stdout, out.stdout


def course_with_its_grader(tmp_path):
    """A course folder with a grader of its own (the command run as `python -m grader` from it, its daemon in a
    folder of its own): the folder, `check(name)` and `stop()`."""
    copy = tmp_path / "course"
    for part in ("grader", "exercises", "solutions"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("course.toml", "_toc.yml", "_config.yml"):
        shutil.copy(ROOT / part, copy / part)
    where = tmp_path / "daemon"
    env = {**os.environ, "DEVCOURSE_DAEMON_DIR": str(where), "PYTHONPATH": str(copy), "COLUMNS": "200"}

    def command(*args):
        return subprocess.run([sys.executable, "-m", "grader", *args], cwd=copy, env=env, capture_output=True,
                              text=True, timeout=600)

    return copy, where, (lambda name: command("check", name)), (lambda: command("stop"))


def test_a_daemon_running_older_grader_code_is_replaced_before_it_grades(tmp_path):
    """A course folder whose grader changes while its daemon runs (an update, an instructor's edit): the next
    check is graded by the new code, without `devcourse stop`."""
    copy, where, check_name, stop = course_with_its_grader(tmp_path)

    def check():
        return check_name(NB.name)

    try:
        first = check()
        assert "but it should be on sim:0" in first.stdout, first.stdout + first.stderr
        old = zygote_pids(where)
        expect = copy / "grader" / "engine" / "expect.py"
        text = expect.read_text()
        assert "but it should be on {device}" in text
        expect.write_text(text.replace("but it should be on {device}", "but it belongs on {device}"))
        second = check()
        assert "but it belongs on sim:0" in second.stdout, second.stdout + second.stderr
        assert not set(old.values()) & set(zygote_pids(where).values())
        alive = lambda: [p for p in old.values() if containment._state(p) not in (None, "Z", "X")]
        assert wait_for(lambda: not alive(), 30), "the old daemon kept running"
    finally:
        stop()
    assert wait_for(lambda: not serving(where), 30)


def test_a_grader_that_cannot_be_loaded_says_why(tmp_path):
    """A check module that fails to import (a grader fault: a missing helper module), and one whose worker dies
    while importing it (a native crash, os._exit): each report names the error's last line, under the grading
    process, instead of an empty table that says no check could run."""
    copy, where, check, stop = course_with_its_grader(tmp_path)
    missing = copy / "grader" / "checks" / NB.grader_file.relative_to(ROOT / "grader" / "checks")
    missing.write_text("import helpers_that_are_not_shipped\n" + missing.read_text())
    dying = copy / "grader" / "checks" / MM.grader_file.relative_to(ROOT / "grader" / "checks")
    dying.write_text("import os, sys\nprint('loading the checks of masked_mean', flush=True)\n"
                     "sys.stderr.write('RuntimeError: the line that says why the grader died\\n')\n"
                     "sys.stderr.flush()\nos._exit(3)\n" + dying.read_text())
    try:
        out = check(NB.name)
        assert out.returncode == 1, out.stdout + out.stderr
        assert ("the grader could not run: the check module test_noise_batch.py could not be loaded: "
                "ModuleNotFoundError: No module named 'helpers_that_are_not_shipped'. That is a fault of the "
                "grader, not of your code") in out.stdout, out.stdout
        assert "no check could run" not in out.stdout
        assert "FAILED: noise_batch does not pass yet: the grading process had a problem" in out.stdout

        out = check(MM.name)
        assert out.returncode == 1, out.stdout + out.stderr
        lines = out.stdout.splitlines()
        said = [ln.strip() for ln in lines if "the grader could not run:" in ln]
        assert said == ["the grader could not run: loading the checks of masked_mean"], out.stdout
        assert "  RuntimeError: the line that says why the grader died" in lines, out.stdout
    finally:
        stop()
    assert wait_for(lambda: not serving(where), 30)


def test_the_end_of_a_dying_workers_output_reaches_its_message(tmp_path):
    """A worker that dies before its checks are listed: the end of what it wrote (where its error is) is kept,
    read through the zygote's own loop from a real process, and put in the grading process's message."""
    rfd, wfd = os.pipe()  # the records' channel: nothing comes
    ofd, owfd = os.pipe()  # the worker's output
    noise = "".join(f"noise line {i} {'x' * 60}\n" for i in range(200))  # far more than is kept
    worker = subprocess.Popen([sys.executable, "-c", "import os, sys; sys.stdout.write(sys.argv[1]); "
                               "sys.stdout.write('GraderSetupError: the line that says why\\n'); sys.stdout.flush(); "
                               "os._exit(3)", noise], stdout=owfd, pass_fds=(owfd,))
    os.close(wfd)
    os.close(owfd)
    zygote = types.SimpleNamespace(client=None)
    try:
        lines, output, status, stopped = workers.Zygote._collect(zygote, worker.pid, rfd, ofd, timeout=60)
    finally:
        os.close(rfd)
        os.close(ofd)
    assert lines == [] and stopped is None and os.waitstatus_to_exitcode(status) == 3
    assert output.endswith("GraderSetupError: the line that says why\n")
    assert len(output) <= judging.OUTPUT_TAIL < len(noise)
    answer = judging.judge(lines, "token", 64, status, stopped, 0, output, {"spec": "cpu"})
    (problem,) = answer["results"]
    assert problem["check"] == "(grader process)" and problem["outcome"] == "failed"
    assert problem["message"].startswith("the grader could not run:")
    assert problem["message"].endswith("GraderSetupError: the line that says why"), problem["message"]
    assert "noise line 199" in problem["message"]  # the lines before it, for context
    assert "noise line 150" not in problem["message"]  # a few, not the whole output


# ------------------------------------------------------------------------------------ the classroom
def test_a_block_on_which_no_check_ran_does_not_pass():
    g = runner.grade(MM, MM.solution_file, device="cpu")  # right, but graded on the CPU alone
    assert g.ran and not g.failures
    passed, text = blocks.verdict(MM, g.results, ("accelerator", "cpu"))
    assert not passed and "no check of the block 'accelerator' ran on this host" in text, text
    assert blocks.verdict(MM, g.results, ("copies", "cpu"))[0]  # the copies are measured on the CPU too
    assert blocks.verdict(MM, g.results, ("cpu",))[0]
    skipped = [dataclass_replace(r, outcome="skipped", message="no such device") for r in g.results]
    assert not blocks.verdict(MM, skipped, ("cpu",))[0]  # skipped is not passed


def dataclass_replace(r, **fields):
    import dataclasses

    return dataclasses.replace(r, **fields)


#: The documented split (book/instructors.md): the blocks the shipped file fails share the exercise's points
#: as cpu 1 : accelerator 2 : copies 1, rounded to hundredths, the first taking what rounding left; the blocks it
#: passes carry none but every scored block requires them. Pinned by value, so that a change of the weights, the
#: rounding or the choice of blocks is seen (and, if meant, written here and in the book).
SPLITS = {
    "noise_batch": [("accelerator", 1, ("accelerator", "cpu"))],
    "masked_mean": [("accelerator", 1.33, ("accelerator", "cpu")), ("copies", 0.67, ("copies", "cpu"))],
    "standardize_features": [("cpu", 2, ("cpu", "accelerator"))],
    "positional_encoding": [("cpu", 0.67, ("cpu",)), ("accelerator", 1.33, ("accelerator",))],
    "causal_mask": [("copies", 1, ("copies", "cpu", "accelerator"))],
    # its row loop is counted on the CPU too since the whole-contract grader (issue 27): cpu and accelerator
    "per_row_loss": [("cpu", 0.67, ("cpu",)), ("accelerator", 1.33, ("accelerator",))],
}


@pytest.mark.parametrize("name", list(SPLITS))
def test_the_points_of_an_exercise_are_split_as_documented(name):
    ex = course.get(name)
    split = blocks.split(ex, runner.grade(ex, ex.exercise_file).results)
    assert [(b.name, b.points, b.requires) for b in split] == SPLITS[name]
    assert round(sum(b.points for b in split), 6) == ex.points


WRONG_ON_CPU = ("import torch\n\ndef masked_mean(x, lengths):\n"
                "    positions = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = (positions[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)\n"
                "    total = (x * mask).sum(dim=1)\n"
                "    if x.device.type == 'cpu':\n"
                "        return total  # forgot to divide, on the CPU only\n"
                "    return total / lengths[:, None].to(x.dtype)\n")


def test_the_learners_kernel_scores_each_test_cell_on_every_block_it_requires(monkeypatch):
    split = blocks.split(MM, runner.grade(MM, MM.exercise_file).results)
    assert {b.name for b in split} == {"accelerator", "copies"}  # the cpu block is kept, not scored

    def answered(code):
        monkeypatch.setattr(kernel, "_history", lambda: [f"%%answer {MM.name}\n{code}"])

    answered(WRONG_ON_CPU)  # right on the accelerators, no copies: wrong on the CPU, which every cell requires
    for b in split:
        with pytest.raises(kernel.NotYet, match=r"on cpu"):
            kernel.require(MM.name, *b.requires, fresh=True)
    answered(MM.solution_file.read_text())
    for b in split:
        kernel.require(MM.name, *b.requires, fresh=True)  # passes: no exception
    answered("import torch\n")  # no function at all
    for b in split:
        with pytest.raises(kernel.NotYet):
            kernel.require(MM.name, *b.requires, fresh=True)
