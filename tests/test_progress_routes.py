"""A learner's progress is never lost (issue 41), through the real `devcourse` command: a slow check beside
fast ones, `check --all` beside `watch` (through a pseudo-terminal), a notebook kernel beside a terminal, each
recording only what it graded; a pass of one route (the file, the notebook) is not taken away by a failing
check of the other; `skip` never lowers a score.

The slow check is made slow on purpose and for as long as the test wants: its code waits, inside the grading
worker, for a gate file that the test creates once the other commands are done (and says it started by
another file), so that each test overlaps the commands whatever the machine's speed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time

import nbformat
import pexpect
import pytest
from nbclient import NotebookClient

from grader import ROOT
from grader.authoring import notebooks
from grader.catalog import course
from tests.learner import DEVCOURSE, devcourse, exercise_file, fix, learner_env, make_course_copy

HANG_GUARD = 300  # seconds: only ever reached when something hangs


@pytest.fixture
def folder(tmp_path):
    f = make_course_copy(tmp_path)
    devcourse(f, "list")  # past the welcome
    return f


def progress(folder) -> dict:
    return json.loads((folder / ".devcourse" / "progress.json").read_text())


def status(folder, name: str) -> str | None:
    return progress(folder)["exercises"].get(name, {}).get("status")


def fix_behind_a_gate(folder, name: str, shared) -> tuple:
    """The exercise's reference fix, whose import in a grading worker says so (`started`) and then waits for
    `gate` to exist. In a notebook's kernel (`__main__`) it does not wait."""
    started, gate = shared / f"{name}.started", shared / f"{name}.gate"
    exercise_file(folder, name).write_text(
        course.get(name).solution_file.read_text()
        + f"\n\nif __name__ != '__main__':\n    import os as _os, time as _time\n"
          f"    open({str(started)!r}, 'w').close()\n"
          f"    while not _os.path.exists({str(gate)!r}):\n        _time.sleep(0.02)\n")
    return started, gate


def start(folder, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(DEVCOURSE), *args], cwd=folder, env=learner_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=HANG_GUARD)
    return proc.returncode, out + err


def test_a_slow_check_beside_fast_ones_loses_none_of_their_progress(folder, shared):
    started, gate = fix_behind_a_gate(folder, "stale_optimizer", shared)
    slow = start(folder, "check", "stale_optimizer", "--timeout", str(HANG_GUARD))
    try:
        wait_for(started, slow)  # it has read the progress file and is grading
        fix(folder, "causal_mask")
        fix(folder, "noise_batch")
        fast = [start(folder, "check", "causal_mask"), start(folder, "check", "noise_batch")]  # three at once
        assert [finish(p)[0] for p in fast] == [0, 0]
        assert devcourse(folder, "hint", "pick_device").returncode == 0
        assert devcourse(folder, "skip", "eval_loop").returncode == 0
        assert "causal_mask" in devcourse(folder, "list").stdout
    finally:
        gate.touch()
    code, out = finish(slow)
    assert code == 0, out
    assert "PASSED: stale_optimizer" in out
    data = progress(folder)["exercises"]
    assert {n: data[n]["status"] for n in ("stale_optimizer", "causal_mask", "noise_batch", "eval_loop")} == {
        "stale_optimizer": "done", "causal_mask": "done", "noise_batch": "done", "eval_loop": "skipped"}
    assert data["pick_device"]["hints"] == 1
    points = sum(course.get(n).points for n in ("stale_optimizer", "causal_mask", "noise_batch"))
    listing = devcourse(folder, "list").stdout
    assert f"3 of {len(course.load())} exercises done, {points} of" in listing
    # "Next" is the first exercise neither done nor skipped in course order, not the one after the last pass
    assert "Next: pick_device" in listing
    capstones = [e.name for e in course.load() if e.capstone]
    assert re.findall(r"\| (\w+) \* +\|", listing) == capstones and len(capstones) == 6  # marked, piped too
    # a skip of a done exercise changes nothing
    out = devcourse(folder, "skip", "causal_mask")
    assert out.returncode == 0
    assert "causal_mask is done: there is nothing to skip, and it keeps its points." in out.stdout
    assert devcourse(folder, "list").stdout == listing


def test_check_all_beside_watch_and_s_right_after_a_pass(folder, shared):
    # causal_mask passed in its notebook, and its file holds a failed attempt: --all must not take the pass away
    shutil.copytree(ROOT / "notebooks", folder / "notebooks")
    notebook = folder / notebooks.notebook_path("tensors-and-devices").relative_to(ROOT)
    nb = json.loads(notebook.read_text())
    cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith("%%exercise causal_mask"))
    cell["source"] = "%%exercise causal_mask\n" + course.get("causal_mask").solution_file.read_text()
    notebook.write_text(json.dumps(nb))
    assert devcourse(folder, "check", "causal_mask", str(notebook)).returncode == 0
    attempt = exercise_file(folder, "causal_mask")
    attempt.write_text(attempt.read_text() + "# an attempt\n")
    started, gate = fix_behind_a_gate(folder, "noise_batch", shared)
    # check --all stops at the first missing file: this one keeps it to the first four exercises.
    exercise_file(folder, course.load()[4].name).unlink()
    every = start(folder, "check", "--all", "--timeout", str(HANG_GUARD))
    try:
        wait_for(started, every)  # --all has read the progress file and grades its first exercise
        fix(folder, "masked_mean")
        child = pexpect.spawn(str(DEVCOURSE), ["watch", "masked_mean"], cwd=str(folder), env=learner_env(),
                              encoding="utf-8", timeout=HANG_GUARD, dimensions=(60, 160))
        child.expect("masked_mean passes on")
        child.expect("save it to re-check")
        child.send("s")  # right after the pass: moves on, and masked_mean stays done
        child.expect("1. noise_batch")  # the first exercise not done, in course order
        child.send("q")
        child.expect("Bye")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert status(folder, "masked_mean") == "done"
    finally:
        gate.touch()
    code, out = finish(every)
    assert code == 2 and f"exercises/{course.load()[4].path} does not exist" in out, out
    data = progress(folder)["exercises"]
    assert data["masked_mean"]["status"] == "done" and "skipped" not in data["masked_mean"]
    assert data["noise_batch"]["status"] == "done"  # recorded by --all
    assert "pick_device" not in data  # graded by --all, as shipped and never checked: not started
    assert (data["causal_mask"]["file"]["passed"], data["causal_mask"]["status"]) == (False, "done")
    listing = devcourse(folder, "list").stdout
    assert re.search(r"pick_device +\| .* \| not started", listing)
    assert re.search(r"causal_mask +\| .* \| done \(notebook\)", listing)
    points = sum(course.get(n).points for n in ("masked_mean", "noise_batch", "causal_mask"))
    assert f"3 of {len(course.load())} exercises done, {points} of" in listing
    assert "Next: pick_device" in listing


def outputs_text(cell) -> str:
    return "\n".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def test_a_notebook_kernel_beside_a_terminal_and_one_rule_for_both(folder, shared):
    ex = course.get("masked_mean")
    nb = nbformat.read(notebooks.notebook_path(ex.chapter), 4)
    setup = nb.cells[1]
    exercise = next(c for c in nb.cells if c.source.startswith(f"%%exercise {ex.name}\n"))
    check = nb.cells[nb.cells.index(exercise) + 1]
    listing = nbformat.v4.new_code_cell("%devcourse list")
    nb.cells = [setup, exercise, check, listing]
    started, gate = fix_behind_a_gate(folder, "stale_optimizer", shared)
    client = NotebookClient(nb, kernel_name="python3", timeout=HANG_GUARD,
                            resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel(env=learner_env()):
        client.execute_cell(setup, 0)
        slow = start(folder, "check", "stale_optimizer", "--timeout", str(HANG_GUARD))
        try:
            wait_for(started, slow)
            exercise.source = f"%%exercise {ex.name}\n" + ex.solution_file.read_text()
            client.execute_cell(exercise, 1)
            client.execute_cell(check, 2)
            assert "masked_mean passes on" in outputs_text(check)
        finally:
            gate.touch()
        code, out = finish(slow)
        assert code == 0, out
        assert status(folder, "masked_mean") == "done" and status(folder, "stale_optimizer") == "done"

        # the file, still broken, fails: the notebook's pass stays, and list says where it came from
        out = devcourse(folder, "check", "masked_mean")
        assert out.returncode == 1 and "Not recorded" not in out.stdout
        assert status(folder, "masked_mean") == "done"
        assert re.search(r"masked_mean +\| .* \| done \(notebook\)", devcourse(folder, "list").stdout)
        # the other way round: a file that passes, a notebook cell that fails
        exercise.source = f"%%exercise {ex.name}\n" + ex.exercise_file.read_text()
        fix(folder, "masked_mean")
        assert devcourse(folder, "check", "masked_mean").returncode == 0
        client.execute_cell(exercise, 1)
        client.execute_cell(check, 2)
        assert "does not pass yet" in outputs_text(check)
        client.execute_cell(listing, 3)
        assert re.search(r"masked_mean +\| .* \| done \(file\)", outputs_text(listing)), outputs_text(listing)
        assert "Next: masked_mean" not in outputs_text(listing)
    entry = progress(folder)["exercises"]["masked_mean"]
    assert (entry["file"]["passed"], entry["notebook"]["passed"], entry["status"]) == (True, False, "done")
