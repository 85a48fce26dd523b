"""The classroom loop with the real nbgrader CLI and gradebook (grader/classroom, book/instructors.md).

One small assignment (masked_mean, 2 points, and noise_batch, 1 point) goes through generate (ours), then
nbgrader's generate_assignment, validate, release_assignment, fetch_assignment, submit (one simulated
learner each), collect, then autograde: stock `nbgrader autograde` on the honest learners, and
`devcourse classroom autograde` (the engine grades the answer cells; no notebook runs) on a copy holding the
same honest learners and attack notebooks written with the source in hand; then generate_feedback and export.
Honest learners must score as with stock; each attack what its answers deserve.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from grader import ROOT
from grader.engine import settings
from grader.catalog import course
from grader.classroom import blocks, isolation, kernel, report, source
from tests.test_batch import ATTACK as BATCH_ATTACK

BIN = Path(sys.executable).parent
# A hang guard, not a speed limit: the first test here runs the whole nbgrader loop (74 s on two idle cores), which
# took more than the suite's 600 s beside a load of 25, where the Dask test then errored instead of comparing.
pytestmark = pytest.mark.timeout(3600)
ASSIGNMENT = "part1-where-tensors-live"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
EXCHANGE_COURSE = "device-course"
MM, NB = course.get("masked_mean"), course.get("noise_batch")
ROUND_TRIP = (ROOT / "tests/submissions/masked_mean/wrong_cpu_round_trip.py").read_text()
WARNS = "import warnings\nwarnings.warn('a UserWarning at import', UserWarning)\n"
ENDLESS = "import torch\n\n\ndef make_noise_batch(batch_size, features, device):\n    while True:\n        pass\n"
DURATIONS: dict[str, float] = {}
ENDLESS_LIMIT = 4  # seconds per check while autograding


def cell(nb, grade_id):
    return next(c for c in nb.cells if c.get("id") == grade_id or c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def answer(nb, ex, code):
    cell(nb, f"{ex.name}-answer").source = f"%%answer {ex.name}\n{code}"


def fixed(ex):
    return source.solution_code(ex)


def untouched(nb):
    pass


def all_fixed(nb):
    answer(nb, MM, fixed(MM))
    answer(nb, NB, fixed(NB))


def partly_fixed(nb):  # noise_batch right; masked_mean right on every device, but through the CPU
    answer(nb, NB, fixed(NB))
    answer(nb, MM, ROUND_TRIP)


def crashing(nb):  # masked_mean's answer raises when it is loaded
    answer(nb, NB, fixed(NB))
    answer(nb, MM, fixed(MM) + "\nraise RuntimeError('my code crashes')\n")


def endless_loop(nb):  # noise_batch never returns
    answer(nb, MM, fixed(MM))
    answer(nb, NB, ENDLESS)


def warns(nb):  # fully right, but warns at import and on every call: still full marks
    answer(nb, MM, WARNS + fixed(MM))
    answer(nb, NB, WARNS + fixed(NB).replace("    return noise", "    warnings.warn('noise!', UserWarning)\n"
                                                                  "    return noise"))


# ---- attacks: notebooks that try to score more than their answers deserve ------------------------------
GRADEBOOK_WRITE = ("import sqlite3, glob\n"
                   "for db in glob.glob('../../../**/gradebook.db', recursive=True):\n"
                   "    sqlite3.connect(db).execute('update grade set auto_score = 99').connection.commit()\n")


def added_cell(nb, code, after="setup"):
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == after)
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(code))


def redefines_helpers(nb):  # masked_mean untouched; an added cell makes every test helper pass
    answer(nb, NB, fixed(NB))
    added_cell(nb, "import grader.classroom.kernel as k\n"
                   "k.require = lambda *a, **kw: print('passed')\nk.grade = k.self_check = k.require\n"
                   "require = self_check = k.require\n")


def input_transformer(nb):  # the answer cell, without its %%answer line, rewrites every later cell to nothing
    answer(nb, NB, fixed(NB))
    cell(nb, "masked_mean-answer").source = (
        "try:\n    get_ipython().input_transformers_cleanup.append(lambda lines: [])\nexcept NameError:\n    pass\n"
        + source.broken_code(MM))


def edits_hidden_tests(nb):  # masked_mean untouched; one test cell rewritten to pass, the other deleted
    answer(nb, NB, fixed(NB))
    cell(nb, "masked_mean-accelerator").source = "print('all good')"
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "masked_mean-copies"]


def writes_the_gradebook(nb):  # masked_mean untouched; an added cell sets every score in the gradebook to 99
    answer(nb, NB, fixed(NB))
    added_cell(nb, GRADEBOOK_WRITE, after="masked_mean-copies")


def prints_passed(nb):  # masked_mean as shipped, but it prints what a passing test cell prints
    answer(nb, NB, fixed(NB))
    answer(nb, MM, "print('masked_mean: right on an accelerator, right on the CPU ✓ passed')\n" + source.broken_code(MM))


def deleted(nb):  # the first code cell and every cell of masked_mean but its explanation are gone
    answer(nb, NB, fixed(NB))
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in (
        "setup", "masked_mean-answer", "masked_mean-check", "masked_mean-accelerator", "masked_mean-copies")]


def forged_grade_cell(nb):  # masked_mean untouched; an added cell claims to be a test cell worth 5 points
    answer(nb, NB, fixed(NB))
    added_cell(nb, "print('masked_mean: right on an accelerator, right on the CPU ✓ passed')", after="masked_mean-copies")
    forged = next(c for c in nb.cells if c.source.startswith("print('masked_mean"))
    forged.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 5,
                                   "grade_id": "masked_mean-bonus", "schema_version": 3}


def answer_of_another(nb):  # masked_mean's answer cell says it answers noise_batch, and holds its right fix
    answer(nb, NB, fixed(NB))
    cell(nb, "masked_mean-answer").source = f"%%answer noise_batch\n{fixed(NB)}"


def batchmate(nb):  # masked_mean's answer, graded first in its batch, rewrites the class's other answers (test_batch)
    answer(nb, NB, fixed(NB))
    answer(nb, MM, BATCH_ATTACK)


def _pts(ex, block):
    return next(b.points for b in SPLIT[ex.name] if b.name == block)


SPLIT: dict = {}
THROUGH_THE_EXCHANGE = ("untouched", "fixed", "partly")  # fetch, submit, collect; the others are placed
HONEST = {  # learner -> (edit, expected score as a function of the split): graded by stock and by ours
    "untouched": (untouched, lambda: 0),
    "fixed": (all_fixed, lambda: 3),
    "partly": (partly_fixed, lambda: 1 + _pts(MM, "accelerator")),
    "crashing": (crashing, lambda: 1),
    "endless": (endless_loop, lambda: 2),
    "warns": (warns, lambda: 3),
}
ATTACKS = {  # learner -> (edit, what the answers deserve): graded by ours only (stock runs the notebook)
    "redefines": (redefines_helpers, lambda: 1),
    "transformer": (input_transformer, lambda: 1),
    "hidden": (edits_hidden_tests, lambda: 1),
    "gradebook": (writes_the_gradebook, lambda: 1),
    "prints": (prints_passed, lambda: 1),
    "deleted": (deleted, lambda: 1),
    "batchmate": (batchmate, lambda: 1),  # and the honest learners, graded after it, score as with stock
    "forged": (forged_grade_cell, lambda: 1),
    "another": (answer_of_another, lambda: 1),
}
LEARNERS = {**HONEST, **ATTACKS}


def run(*args, cwd, env=None, check=True, timeout=1800):  # a hang guard (pytestmark)
    start = time.monotonic()
    p = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **(env or {})})
    key = " ".join(str(a) for a in args[:2])
    DURATIONS[key] = DURATIONS.get(key, 0) + time.monotonic() - start
    if check and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def nbgrader(*args, cwd, **kw):
    return run(BIN / "nbgrader", *args, cwd=cwd, **kw)


def scores_in_gradebook(root: Path, learners=None) -> tuple[dict, dict]:
    """{(student, cell): (auto_score, max_score, needs_manual_grade)} and {student: total} from nbgrader's
    gradebook."""
    from nbgrader.api import Gradebook

    cells, totals = {}, {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "device-course") as gb:
        for s in gb.students:
            if learners is not None and s.id not in learners:
                continue
            sub = gb.find_submission(ASSIGNMENT, s.id)
            totals[s.id] = round(sub.score, 2)
            for nbk in sub.notebooks:
                for g in nbk.grades:
                    cells[(s.id, g.name)] = (g.auto_score, g.max_score, g.needs_manual_grade)
    return cells, totals


def autograde_flags() -> list[str]:
    """--unisolated only where the engine cannot isolate its workers (before grader.guard.sandbox exists, say)."""
    return [] if isolation.status().available else ["--unisolated"]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """The whole loop, once; returns its folders and outputs."""
    base = tmp_path_factory.mktemp("classroom")
    # The exchange is the course folder's own (its generated nbgrader_config.py), as for a trial on one machine:
    # the instructor's commands find it there, a learner's name it (book/instructors.md).
    root, exchange, homes = base / "course", base / "course" / "exchange", base / "homes"
    out = {"root": root, "exchange": exchange, "base": base}
    xflag = f"--Exchange.root={exchange}"

    out["generate"] = run(sys.executable, "-m", "grader.classroom", "generate", root, "--only",
                          "masked_mean,noise_batch", cwd=ROOT)
    SPLIT.update({e.name: blocks.split(e, _shipped(e)) for e in (MM, NB)})
    nbgrader("generate_assignment", ASSIGNMENT, cwd=root)
    out["validate_source"] = nbgrader("validate", f"source/{ASSIGNMENT}/{NOTEBOOK}", cwd=root, check=False)
    out["validate_release"] = nbgrader("validate", f"release/{ASSIGNMENT}/{NOTEBOOK}", cwd=root, check=False)
    nbgrader("release_assignment", ASSIGNMENT, cwd=root)

    fetched = homes / "_fetch"
    fetched.mkdir(parents=True)
    nbgrader("fetch_assignment", ASSIGNMENT, "--course", EXCHANGE_COURSE, xflag, cwd=fetched)
    ours = base / "course-ours"

    def submit(learner):
        home = homes / learner
        shutil.copytree(fetched / ASSIGNMENT, home / ASSIGNMENT)
        path = home / ASSIGNMENT / NOTEBOOK
        nb = nbformat.read(path, as_version=4)
        LEARNERS[learner][0](nb)
        nbformat.write(nb, path)
        if learner in THROUGH_THE_EXCHANGE:
            nbgrader("submit", ASSIGNMENT, "--course", EXCHANGE_COURSE, "--student", learner, xflag, cwd=home)
        else:  # where collect leaves a submission (each nbgrader start costs seconds on a busy machine)
            folder = (root if learner in HONEST else ours) / "submitted" / learner / ASSIGNMENT
            shutil.copytree(home / ASSIGNMENT, folder)
            (folder / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")

    with ThreadPoolExecutor(4) as pool:  # each learner submits from a home of their own
        list(pool.map(submit, LEARNERS))
    nbgrader("collect", ASSIGNMENT, cwd=root)
    shutil.copytree(root, ours, dirs_exist_ok=True)  # the honest class, next to the attacks already there
    shutil.copytree(root, base / "course-dask")
    # The endless learner's loop is stopped after this per-check limit instead of the course's 20 s.
    limit = {settings.CHECK_TIMEOUT_VARIABLE: str(ENDLESS_LIMIT)}
    out["stock"] = nbgrader("autograde", ASSIGNMENT, cwd=root, env=limit)
    out["ours"] = run(sys.executable, "-m", "grader.classroom", "autograde", ASSIGNMENT, "--root", ours,
                      *autograde_flags(), cwd=ROOT, env=limit)
    out["ours_root"] = ours
    # Run again from inside the course folder, as the guide says, without force: nothing is graded again.
    out["again"] = run(BIN / "devcourse", "classroom", "autograde", ASSIGNMENT, "--no-force", *autograde_flags(),
                       cwd=ours)
    nbgrader("generate_feedback", ASSIGNMENT, cwd=ours)
    nbgrader("export", cwd=ours)
    yield out
    print("durations (s):", {k: round(v, 1) for k, v in DURATIONS.items()})


def _shipped(ex):
    from grader.engine import runner

    return runner.grade(ex, ex.exercise_file).results


def test_points_are_split_into_blocks_that_sum_to_the_exercise(classroom):
    assert [b.name for b in SPLIT["masked_mean"]] == ["accelerator", "copies"]
    assert [b.name for b in SPLIT["noise_batch"]] == ["accelerator"]
    for ex in (MM, NB):
        assert round(sum(b.points for b in SPLIT[ex.name]), 6) == ex.points
        assert all(b.requires[1:] == ("cpu",) for b in SPLIT[ex.name])  # what worked must keep working


def test_the_source_validates_and_the_release_fails_as_shipped(classroom):
    assert "Success! Your notebook passes all the tests." in classroom["validate_source"].stdout
    release = classroom["validate_release"].stdout
    assert "Success!" not in release and "failed" in release
    assert "does not pass yet" in release


def test_released_files_hold_no_solution_and_say_how_to_check_in_the_notebook(classroom):
    released = list((classroom["root"] / "release").rglob("*.ipynb"))
    released += list((classroom["exchange"] / EXCHANGE_COURSE / "outbound").rglob("*.ipynb"))
    assert len(released) == 2
    src = nbformat.read(classroom["root"] / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for f in released:
        text = f.read_text()
        for secret in ("BEGIN SOLUTION", "device=x.device", "torch.randn(batch_size, features, device=device)",
                       '"devcourse"', "devcourse check", "Check your fix with"):
            assert secret not in text, f"{f} holds {secret!r}"
        nb = nbformat.read(f, as_version=4)
        assert cell(nb, "masked_mean-answer").source == source.released_answer(MM)  # the broken program
        assert "positions = torch.arange(T) " in cell(nb, "masked_mean-answer").source
        assert "run the self-check under it" in cell(nb, "masked_mean-explanation").source
        for b in SPLIT["masked_mean"]:  # a test cell has no hidden part: released as in the source
            assert cell(nb, b.grade_id).source == cell(src, b.grade_id).source


def test_the_generated_exchange_is_the_course_folders_and_no_force_grades_nothing_twice(classroom):
    # release_assignment and collect ran without --Exchange.root: the generated config's exchange
    assert (classroom["root"] / "exchange" / EXCHANGE_COURSE / "outbound" / ASSIGNMENT / NOTEBOOK).is_file()
    assert sorted(p.name for p in (classroom["root"] / "submitted").iterdir()) == sorted(HONEST)
    again = classroom["again"]
    assert again.returncode == 0, again.stdout + again.stderr
    said = " ".join(again.stdout.split())
    assert f"Skipping {len(LEARNERS)} submission(s) already autograded" in said
    assert f"Nothing to autograde for {ASSIGNMENT}" in said and "Grading" not in said


def test_stock_autograde_reports_no_changed_cell_for_honest_submissions(classroom):
    # Hidden test parts made nbgrader report every released test cell as changed ("Attribute 'checksum' ...").
    assert "has changed" not in classroom["stock"].stdout + classroom["stock"].stderr


def test_honest_submissions_score_as_with_stock_autograde(classroom):
    out = classroom["ours"].stdout
    assert f"Autograded {len(LEARNERS)} of {len(LEARNERS)}" in out and "no notebook run" in out
    stock_cells, stock_totals = scores_in_gradebook(classroom["root"])
    ours_cells, ours_totals = scores_in_gradebook(classroom["ours_root"], HONEST)
    assert len(stock_cells) == len(HONEST) * 3  # three test cells per learner
    assert ours_cells == stock_cells
    assert ours_totals == stock_totals


def test_each_learner_gets_what_their_answers_deserve_in_the_exported_csv(classroom):
    with open(classroom["ours_root"] / "grades.csv") as f:
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    expected = {learner: round(score(), 2) for learner, (_, score) in LEARNERS.items()}
    assert {k: round(v, 2) for k, v in rows.items()} == expected


def test_attacks_change_nothing_and_need_no_manual_grading(classroom):
    cells, _ = scores_in_gradebook(classroom["ours_root"], ATTACKS)
    assert len(cells) == len(ATTACKS) * 3  # a deleted test cell was put back and scored
    for (learner, name), (score, points, manual) in cells.items():
        assert manual is False, (learner, name)
        assert score == (points if name.startswith("noise_batch") else 0), (learner, name, score)
    answered = cell(nbformat.read(classroom["ours_root"] / "autograded" / "deleted" / ASSIGNMENT / NOTEBOOK,
                                  as_version=4), "masked_mean-copies")
    assert "no answer cell" in answered.outputs[0].evalue


def test_the_autograded_notebook_and_the_feedback_show_the_engines_report(classroom):
    path = classroom["ours_root"] / "autograded" / "partly" / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(path, as_version=4)
    (report_out,) = cell(nb, "masked_mean-check").outputs
    assert "<pre" in report_out.data["text/html"]
    assert "does not move data back and forth" in report_out.data["text/plain"]
    (copies,) = cell(nb, "masked_mean-copies").outputs
    assert copies.output_type == "error" and "does not pass yet" in copies.evalue
    # which required block failed and which passed, in lines that fit the feedback page (issue 41)
    assert "Failed: no needless copies or round trips. Passed: right on the CPU." in " ".join(copies.evalue.split())
    assert max(len(line) for line in copies.evalue.splitlines()) <= blocks.VERDICT_WIDTH
    (accel,) = cell(nb, "masked_mean-accelerator").outputs
    assert accel.output_type == "stream" and "✓" in accel.text
    feedback = (classroom["ours_root"] / "feedback" / "partly" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "does not pass yet" in feedback and "does not move data back and forth" in feedback
    for learner in LEARNERS:
        assert (classroom["ours_root"] / "feedback" / learner / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()


def test_the_class_is_graded_with_the_instructors_time_limit(classroom):
    path = classroom["ours_root"] / "autograded" / "endless" / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(path, as_version=4)
    shown = "".join(str(o) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("noise_batch-")
                    for o in c.get("outputs", []))
    assert f"did not finish within {ENDLESS_LIMIT} s" in shown


@pytest.mark.exhaustive
def test_on_a_dask_cluster_the_gradebook_is_the_same(classroom):
    from dask.distributed import LocalCluster

    from grader.classroom import autograde

    root, some = classroom["base"] / "course-dask", ["fixed", "partly", "untouched"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        results = autograde.autograde(root, ASSIGNMENT, students=some, scheduler=cluster.scheduler_address,
                                      progress=False)
    assert sorted(r["student"] for r in results if r["success"]) == sorted(some)
    stock, _ = scores_in_gradebook(classroom["root"], some)
    ours, _ = scores_in_gradebook(root, some)
    assert ours == stock


def test_autograde_refuses_to_grade_without_isolation_unless_told(classroom, monkeypatch, capsys):
    from grader.classroom.__main__ import main

    root = classroom["base"] / "course-dask"
    before = (root / "gradebook.db").read_bytes()
    monkeypatch.setattr(isolation, "status", lambda: isolation.Isolation(False, "no Landlock on this kernel"))
    code = main(["autograde", ASSIGNMENT, "--root", str(root), "--student", "fixed"])
    said = capsys.readouterr().out
    assert code == 2 and len(said.strip().splitlines()) == 1
    assert "no Landlock on this kernel" in said and "--unisolated" in said
    assert (root / "gradebook.db").read_bytes() == before


# ---- the kernel side, without nbgrader ----------------------------------------------------------------
def test_a_warning_in_the_grading_reaches_no_stderr_and_a_failure_still_raises(monkeypatch, capfd):
    from grader.engine import runner

    real_grade = runner.grade

    def noisy_grade(ex, file, device=None):
        import warnings

        warnings.warn("something PyTorch would say", UserWarning)
        print("to stderr", file=sys.stderr)
        os.write(2, b"to fd 2\n")
        return real_grade(ex, file, device)

    monkeypatch.setattr(runner, "grade", noisy_grade)
    monkeypatch.setattr(kernel, "_history", lambda: [f"%%answer noise_batch\n{fixed(NB)}"])
    kernel.require("noise_batch", "accelerator", "cpu", fresh=True)
    assert capfd.readouterr().err == ""
    monkeypatch.setattr(kernel, "_history", lambda: [f"%%answer noise_batch\n{source.broken_code(NB)}"])
    with pytest.raises(kernel.NotYet) as failed:
        kernel.require("noise_batch", "accelerator", "cpu", fresh=True)
    assert "pass device= to the function that creates it" in " ".join(str(failed.value).split())  # lines folded
    assert capfd.readouterr().err == ""


def test_the_answer_is_the_last_run_of_its_cell_and_keeps_its_line_numbers():
    history = ["%%answer noise_batch\nx = 1", "print(2)", "%%answer noise_batch\ny = 2\nz = 3", "%%answer other\n"]
    code = kernel.answer_source("noise_batch", history)
    assert code.splitlines()[1:] == ["y = 2", "z = 3"]  # line 2 of the cell is line 2 of the graded file
    with pytest.raises(kernel.NotAnswered, match="keep that first line"):
        kernel.answer_source("masked_mean", history)


def test_the_self_check_says_what_devcourse_check_says():
    ex = NB
    from grader.engine import runner

    g = runner.grade(ex, ex.exercise_file)
    ours = report.plain(g)
    cli = run(BIN / "devcourse", "check", ex.name, cwd=ROOT, check=False).stdout
    for r in g.failures:
        assert r.message.split(":")[0] in ours and r.message.split(":")[0] in cli
    assert "does not pass yet" in ours or "Not yet" in ours
    table = [ln for ln in ours.splitlines() if "noise lands on" in ln or "noise lands" in ln]
    assert table and all(ln in cli for ln in table)


# ---- generation, without nbgrader ----------------------------------------------------------------------
def test_assignments_follow_the_parts_of_the_book_or_its_chapters():
    from grader.classroom import generate

    parts = generate.assignments()
    assert [a for a, _, _ in parts] == ["part1-where-tensors-live", "part2-feeding-the-device",
                                        "part3-inside-the-accelerator", "part4-putting-it-together",
                                        "part5-beyond-one-device"]
    assert sum(len(exs) for _, _, groups in parts for _, exs in groups) == len(course.load())
    chapters = generate.assignments(per_chapter=True, only=["masked_mean", "noise_batch"])
    assert [a for a, _, _ in chapters] == ["tensors-and-devices", "device-mismatch"]
    with pytest.raises(KeyError, match="nope"):
        generate.assignments(only=["nope"])


def test_a_cost_only_bug_puts_every_point_on_the_copies_block():
    from grader.engine.runner import CheckResult

    ex = course.get("causal_mask")
    cost = sorted(blocks.cost_checks(ex.grader_file))
    assert cost  # its grader measures copies
    results = [CheckResult("test_mask_is_right_and_on_the_device", leg, "passed") for leg in ("cpu", "sim:0")]
    results += [CheckResult(cost[0], "cpu", "passed"), CheckResult(cost[0], "sim:0", "failed", "1 copy")]
    (only,) = blocks.split(ex, results)
    assert (only.name, only.points, only.requires) == ("copies", ex.points, ("copies", "cpu", "accelerator"))


def test_generate_releases_the_shipped_bug_whatever_exercises_holds(tmp_path):
    """An instructor who fixed an exercise in their course folder while trying it still releases the bug."""
    copy = tmp_path / "course"
    for part in ("grader", "exercises", "solutions"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("course.toml", "_toc.yml"):
        shutil.copy(ROOT / part, copy / part)
    (copy / "exercises" / NB.path).write_text(NB.solution_file.read_text())  # the instructor's own fix
    daemon_dir = tmp_path / "daemon"  # the copy's own grading processes, ended below
    env = {"DEVCOURSE_DAEMON_DIR": str(daemon_dir), "PYTHONPATH": str(copy)}
    try:
        done = run(sys.executable, "-m", "grader.classroom", "generate", tmp_path / "out", "--only", "noise_batch",
                   cwd=copy, env=env)
    finally:
        run(sys.executable, "-m", "grader", "stop", cwd=copy, env=env, check=False)
    assert "grader/shipped_exercises.json" in done.stdout and "not from exercises/" in done.stdout
    nb = nbformat.read(tmp_path / "out" / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    answer_cell = cell(nb, "noise_batch-answer")
    assert answer_cell.metadata["devcourse"]["release"] == source.released_answer(NB)  # the bug
    assert "torch.randn(batch_size, features)\n" in answer_cell.metadata["devcourse"]["release"] + "\n"
    # the points split came from the shipped (failing) program: the accelerator block carries the point
    assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata["nbgrader"].get("grade")] == [
        "noise_batch-accelerator"]
