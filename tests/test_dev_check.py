"""`devcourse dev check NAME`, the author's one command, run for real (a subprocess of `python -m grader`) in a
scratch copy of the course: it says "done" for a complete exercise, and for one missing pieces it names each
piece and the command that fixes it, after regenerating the files made from others. The coin toss below also
shows that each grading draws afresh (grader.engine.process_setup.fresh_draws): forks of one grading process used to draw
the same "random" inputs every time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import ROOT
from grader.authoring import notebooks
from grader.engine import daemon
from grader.catalog import course

NAME = "noise_batch"  # a fast grader; its submissions are cut to two right and two wrong ones below
KEPT = ("right_box_muller", "right_empty_normal", "wrong_zeros", "wrong_float64")
IGNORED = shutil.ignore_patterns(".git", ".venv", "_build", "__pycache__", ".devcourse", ".pytest_cache", "*.pyc")


@pytest.fixture(scope="module")
def scratch():
    """A copy of the course (the grader package included, so the command judges the copy) and the folder of
    the copy's own grading processes, stopped at the end."""
    base = Path(tempfile.mkdtemp(prefix="devcourse-dev-check-"))
    folder = base / "course"
    shutil.copytree(ROOT, folder, ignore=IGNORED)
    for f in (folder / "tests" / "submissions" / NAME).glob("*.py"):
        if f.stem not in KEPT:
            f.unlink()
    daemons = base / "daemons"
    yield folder, daemons
    daemon.stop(daemons)
    shutil.rmtree(base, ignore_errors=True)


def dev_check(folder: Path, daemons: Path, repeat: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(folder), "DEVCOURSE_DAEMON_DIR": str(daemons), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "grader", "dev", "check", NAME, "--repeat", str(repeat)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def test_a_complete_exercise_is_done_and_an_incomplete_one_is_named_piece_by_piece(scratch):
    folder, daemons = scratch
    run = dev_check(folder, daemons, repeat=1)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"done: {NAME} passes every check" in run.stdout and "Regenerated" not in run.stdout, run.stdout

    subs = folder / "tests" / "submissions" / NAME
    exercise = folder / "exercises" / "01_tensors" / f"{NAME}.py"
    solution = folder / "solutions" / "01_tensors" / f"{NAME}.py"
    grader = folder / "grader" / "checks" / "01_tensors" / f"test_{NAME}.py"
    page = folder / "book" / "tensors-and-devices.md"

    # Every piece missing at once, each in its own way:
    exercise.write_text(exercise.read_text().replace('"""', '"""A changed statement. ', 1))  # notebooks now stale
    for right in subs.glob("right_*.py"):  # no right submissions
        right.unlink()
    shutil.copy(subs / "wrong_zeros.py", subs / "wrong_zeros_again.py")  # no row in the GPU verdict tables
    page.write_text(page.read_text().replace("## CPU tensors", "## Tensors on the CPU"))  # explained_in's section
    solution.write_text("import threading\n" + solution.read_text())  # refused by the source policy
    grader.write_text(grader.read_text() + (  # a check whose outcome is a coin toss, drawn as graders draw
        "\n\ndef test_a_coin_toss(submission, device):\n    assert torch.rand(()) < 0.5\n"))

    run = dev_check(folder, daemons, repeat=2)  # two gradings, so that the coin toss shows
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "things missing" in out and "done" not in out, out
    nb = notebooks.notebook_name("tensors-and-devices")
    assert f"Regenerated: wrote notebooks/{nb}  (python -m grader.authoring.notebooks)" in out, out
    assert "Regenerated: wrote grader/shipped_exercises.json  (python -m grader.authoring.notebooks)" in out, out
    assert "Regenerated: wrote book/tensors-and-devices.ipynb  (python book/_ext/notebooks.py)" in out, out
    assert "A changed statement." in (folder / "notebooks" / nb).read_text()
    assert "A changed statement." in (folder / "grader" / "shipped_exercises.json").read_text()

    def problem(*phrases: str) -> None:
        """A problem's line and the fix under it contain the phrases (the first one on the problem's line)."""
        lines = out.splitlines()
        for line, fix in zip(lines, lines[1:]):
            if phrases[0] in line and fix.startswith("    fix: ") and all(p in line + fix for p in phrases):
                return
        raise AssertionError(f"no problem and its fix say {phrases}:\n{out}")

    problem(f"tests/submissions/{NAME}/ has 0 right_*.py; it needs at least 2",
            f"fix: add tests/submissions/{NAME}/right_")
    problem("book/tensors-and-devices.md has no section #cpu-tensors", "#tensors-on-the-cpu")
    problem(f"the source policy refuses solutions/01_tensors/{NAME}.py", "threading",
            f"devcourse check {NAME} --solution")
    problem("the check test_a_coin_toss changed its outcome between gradings, so it depends on the random draw",
            f"python tools/determinism.py --only {NAME}")
    problem("grader/verdicts/2gpu.json has no row for wrong_zeros_again", f"devcourse dev check {NAME} --await-gpu",
            f"ONLY={NAME} tools/on_gpu.sh OUT verdicts")
    problem("grader/verdicts/1gpu.json has no row for wrong_zeros_again")
    assert "Run devcourse dev check again" in out


def test_await_gpu_lists_the_exercise_for_the_maintainers_run(tmp_path, monkeypatch):
    """The route without GPUs: the exercise goes into every table's list in pending.toml (its comments kept),
    and its rows are no longer asked for; an unknown name is refused."""
    from grader.authoring import gpu_tables

    pending = tmp_path / "pending.toml"
    shutil.copy(gpu_tables.PENDING_FILE, pending)
    monkeypatch.setattr(gpu_tables, "PENDING_FILE", pending)
    ex = course.get(NAME)
    assert gpu_tables.await_gpu(NAME) == sorted(gpu_tables.tables())
    assert gpu_tables.await_gpu(NAME) == []  # once
    assert gpu_tables.awaiting(ex) == sorted(gpu_tables.tables())
    assert not gpu_tables.missing_rows(ex, ["shipped", "wrong_not_graded_on_a_gpu"])
    comments = [line for line in gpu_tables.PENDING_FILE.read_text().splitlines() if line.startswith("#")]
    assert comments and set(comments) <= set(pending.read_text().splitlines())
    with pytest.raises(KeyError, match="no exercise named"):
        gpu_tables.await_gpu("no_such_exercise")


def test_a_grading_process_that_failed_once_is_not_taken_for_a_draw():
    """A crash or a time limit in one grading leaves that grading's checks unrun: said once, as such, not as every
    check 'changing'; a process failing in every grading is a wrong verdict, said by the verdicts; a check that
    flips is a draw."""
    from grader.authoring import submissions
    from grader.engine.runner import CheckResult, Grade

    ex = course.get(NAME)

    def grade(*results):
        return Grade(ex, ex.solution_file, [CheckResult(*r) for r in results])

    ok = ("test_a", "cpu", "passed")
    crash = ("(grader process)", "real", "failed", "the grader could not run: it timed out")
    found = [str(p) for p in submissions.unstable_checks(ex, {
        "solution": [grade(ok), grade(crash)], "shipped": [grade(crash), grade(crash)],
        "wrong_zeros": [grade(ok), grade(("test_a", "cpu", "failed", "no"))]})]
    assert found == [f"{NAME}: solution: its grading process failed in 1 of 2 gradings (real: the grader could not "
                     "run: it timed out)",
                     f"{NAME}: the check test_a changed its outcome between gradings, so it depends on the random "
                     "draw: wrong_zeros [cpu] passed 1 of 2"], found
