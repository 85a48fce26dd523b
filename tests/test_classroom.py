"""The classroom loop with the real nbgrader CLI and gradebook (grader/classroom, book/instructors.md).

One small assignment (masked_mean, 2 points, and noise_batch, 1 point) goes through generate (ours), then
nbgrader's generate_assignment, validate, release_assignment, fetch_assignment, submit (one simulated
learner each), collect, autograde (stock, and ours in parallel on a copy of the course), generate_feedback
and export; each learner's score is checked in the exported CSV.
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

from grader import ROOT, course
from grader.classroom import blocks, kernel, report, source, warm_kernels

BIN = Path(sys.executable).parent
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


def locked_edited(nb):  # masked_mean untouched, its checks rewritten to pass: nbgrader restores them
    answer(nb, NB, fixed(NB))
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.startswith("masked_mean-") and gid not in ("masked_mean-answer", "masked_mean-explanation"):
            c.source = "print('all good')"


def deleted(nb):  # the first code cell (it loads %%answer), masked_mean's answer and a test cell are gone
    answer(nb, NB, fixed(NB))
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                not in ("setup", "masked_mean-answer", "masked_mean-copies")]


def _pts(ex, block):
    return next(b.points for b in SPLIT[ex.name] if b.name == block)


SPLIT: dict = {}
THROUGH_THE_EXCHANGE = ("untouched", "fixed", "partly")  # fetch, submit, collect; the others are placed
LEARNERS = {  # learner -> (edit, expected score as a function of the split)
    "untouched": (untouched, lambda: 0),
    "fixed": (all_fixed, lambda: 3),
    "partly": (partly_fixed, lambda: 1 + _pts(MM, "accelerator")),
    "crashing": (crashing, lambda: 1),
    "endless": (endless_loop, lambda: 2),
    "warns": (warns, lambda: 3),
    "locked": (locked_edited, lambda: 1),
    "deleted": (deleted, lambda: 1),
}


def run(*args, cwd, env=None, check=True, timeout=600):
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


def scores_in_gradebook(root: Path) -> dict:
    """{(student, cell): (auto_score, max_score)} and {student: total} from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    cells, totals = {}, {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "device-course") as gb:
        for s in gb.students:
            sub = gb.find_submission(ASSIGNMENT, s.id)
            totals[s.id] = round(sub.score, 2)
            for nbk in sub.notebooks:
                for g in nbk.grades:
                    cells[(s.id, g.name)] = (g.auto_score, g.max_score, g.needs_manual_grade)
    return cells, totals


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """The whole loop, once; returns its folders and outputs."""
    base = tmp_path_factory.mktemp("classroom")
    root, exchange, homes = base / "course", base / "exchange", base / "homes"
    exchange.mkdir()
    out = {"root": root, "exchange": exchange, "base": base}
    xflag = f"--Exchange.root={exchange}"

    run(sys.executable, "-m", "grader.classroom", "generate", root, "--only", "masked_mean,noise_batch", cwd=ROOT)
    SPLIT.update({e.name: blocks.split(e, _shipped(e)) for e in (MM, NB)})
    nbgrader("generate_assignment", ASSIGNMENT, cwd=root)
    out["validate_source"] = nbgrader("validate", f"source/{ASSIGNMENT}/{NOTEBOOK}", cwd=root, check=False)
    out["validate_release"] = nbgrader("validate", f"release/{ASSIGNMENT}/{NOTEBOOK}", cwd=root, check=False)
    nbgrader("release_assignment", ASSIGNMENT, xflag, cwd=root)

    fetched = homes / "_fetch"
    fetched.mkdir(parents=True)
    nbgrader("fetch_assignment", ASSIGNMENT, "--course", EXCHANGE_COURSE, xflag, cwd=fetched)

    def submit(learner):
        home = homes / learner
        shutil.copytree(fetched / ASSIGNMENT, home / ASSIGNMENT)
        path = home / ASSIGNMENT / NOTEBOOK
        nb = nbformat.read(path, as_version=4)
        LEARNERS[learner][0](nb)
        nbformat.write(nb, path)
        if learner in THROUGH_THE_EXCHANGE:
            nbgrader("submit", ASSIGNMENT, "--course", EXCHANGE_COURSE, "--student", learner, xflag, cwd=home)
        else:  # as collect leaves a submission (each nbgrader start costs seconds on a busy machine)
            shutil.copytree(home / ASSIGNMENT, root / "submitted" / learner / ASSIGNMENT)
            (root / "submitted" / learner / ASSIGNMENT / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")

    with ThreadPoolExecutor(4) as pool:  # each learner submits from a home of their own
        list(pool.map(submit, LEARNERS))
    nbgrader("collect", ASSIGNMENT, xflag, cwd=root)

    parallel_root = base / "course-parallel"
    shutil.copytree(root, parallel_root)
    shutil.copytree(root, base / "course-dask")
    # The endless learner's loop is stopped after this per-check limit instead of the course's 20 s.
    limit = {kernel.TIMEOUT_VARIABLE: str(ENDLESS_LIMIT)}
    out["stock"] = nbgrader("autograde", ASSIGNMENT, cwd=root, env=limit)
    out["parallel"] = run(sys.executable, "-m", "grader.classroom", "autograde", ASSIGNMENT, "--root", parallel_root,
                          "--workers", "2", cwd=ROOT, env=limit)
    out["parallel_root"] = parallel_root
    nbgrader("generate_feedback", ASSIGNMENT, cwd=root)
    nbgrader("export", cwd=root)
    yield out
    print("durations (s):", {k: round(v, 1) for k, v in DURATIONS.items()})


def _shipped(ex):
    from grader import runner

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
    assert "makes the tensor on cpu" in release or "does not pass yet" in release


def test_released_files_hold_no_hidden_test_and_no_solution(classroom):
    released = list((classroom["root"] / "release").rglob("*.ipynb"))
    released += list((classroom["exchange"] / EXCHANGE_COURSE / "outbound").rglob("*.ipynb"))
    assert len(released) == 2
    for f in released:
        text = f.read_text()
        for secret in ("BEGIN HIDDEN TESTS", "fresh=True", "BEGIN SOLUTION", "device=x.device",
                       "torch.randn(batch_size, features, device=device)", '"devcourse"'):
            assert secret not in text, f"{f} holds {secret!r}"
        nb = nbformat.read(f, as_version=4)
        assert cell(nb, "masked_mean-answer").source == source.released_answer(MM)  # the broken program
        assert "positions = torch.arange(T) " in cell(nb, "masked_mean-answer").source


def test_each_learner_gets_the_expected_score_in_the_exported_csv(classroom):
    with open(classroom["root"] / "grades.csv") as f:
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    expected = {learner: round(score(), 2) for learner, (_, score) in LEARNERS.items()}
    assert {k: round(v, 2) for k, v in rows.items()} == expected


def test_feedback_is_generated_for_every_learner(classroom):
    for learner in LEARNERS:
        assert (classroom["root"] / "feedback" / learner / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()


def test_parallel_autograde_ends_in_the_same_gradebook_as_stock_autograde(classroom):
    assert "autograding" in classroom["parallel"].stdout and f"Autograded {len(LEARNERS)} of" in classroom["parallel"].stdout
    if warm_kernels.available():  # the kernels were forked (tests/test_warm_kernels.py tests them alone)
        assert "kernels forked from a warm template" in classroom["parallel"].stdout
    stock_cells, stock_totals = scores_in_gradebook(classroom["root"])
    ours_cells, ours_totals = scores_in_gradebook(classroom["parallel_root"])
    assert len(stock_cells) == len(LEARNERS) * 3  # three test cells per learner
    assert ours_cells == stock_cells
    assert ours_totals == stock_totals
    assert stock_cells[("deleted", "masked_mean-copies")] == (None, _pts(MM, "copies"), True)  # unscored, flagged
    assert stock_cells[("locked", "masked_mean-accelerator")][0] == 0  # an edited test cell was restored


def test_on_a_dask_cluster_the_gradebook_is_the_same(classroom):
    from dask.distributed import LocalCluster

    from grader.classroom import parallel

    root, some = classroom["base"] / "course-dask", ["fixed", "partly", "untouched"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        results = parallel.autograde(root, ASSIGNMENT, students=some, scheduler=cluster.scheduler_address,
                                     progress=False)
    assert sorted(r["student"] for r in results if r["success"]) == sorted(some)
    stock, _ = scores_in_gradebook(classroom["root"])
    ours, _ = scores_in_gradebook(root)
    assert ours == {k: v for k, v in stock.items() if k[0] in some}


def test_the_self_check_shows_its_report_once_as_html_with_plain_text(classroom):
    path = classroom["root"] / "autograded" / "fixed" / ASSIGNMENT / NOTEBOOK
    outputs = cell(nbformat.read(path, as_version=4), "masked_mean-check").outputs
    assert [o.output_type for o in outputs] == ["display_data"]
    assert "<pre" in outputs[0].data["text/html"] and "masked_mean passes" in outputs[0].data["text/plain"]


# ---- the kernel side, without nbgrader ----------------------------------------------------------------
def test_a_warning_in_the_grading_reaches_no_stderr_and_a_failure_still_raises(monkeypatch, capfd):
    from grader import runner

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
    with pytest.raises(kernel.NotYet, match="pass device= to the function that creates it"):
        kernel.require("noise_batch", "accelerator", "cpu", fresh=True)
    assert capfd.readouterr().err == ""


def test_the_answer_is_the_last_run_of_its_cell_and_keeps_its_line_numbers():
    history = ["%%answer noise_batch\nx = 1", "print(2)", "%%answer noise_batch\ny = 2\nz = 3", "%%answer other\n"]
    code = kernel.answer_source("noise_batch", history)
    assert code.splitlines()[1:] == ["y = 2", "z = 3"]  # line 2 of the cell is line 2 of the graded file
    with pytest.raises(kernel.NotAnswered, match="keep that first line"):
        kernel.answer_source("masked_mean", history)


def test_the_self_check_says_what_devcourse_check_says():
    ex = NB
    from grader import runner

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
                                        "part3-inside-the-accelerator", "part4-putting-it-together"]
    assert sum(len(exs) for _, _, groups in parts for _, exs in groups) == len(course.load())
    chapters = generate.assignments(per_chapter=True, only=["masked_mean", "noise_batch"])
    assert [a for a, _, _ in chapters] == ["tensors-and-devices", "device-mismatch"]
    with pytest.raises(KeyError, match="nope"):
        generate.assignments(only=["nope"])


def test_a_cost_only_bug_puts_every_point_on_the_copies_block():
    from grader.runner import CheckResult

    ex = course.get("causal_mask")
    cost = sorted(blocks.cost_checks(ex.grader_file))
    assert cost  # its grader measures copies
    results = [CheckResult("test_mask_is_right_and_on_the_device", leg, "passed") for leg in ("cpu", "sim:0")]
    results += [CheckResult(cost[0], "cpu", "passed"), CheckResult(cost[0], "sim:0", "failed", "1 copy")]
    (only,) = blocks.split(ex, results)
    assert (only.name, only.points, only.requires) == ("copies", ex.points, ("copies", "cpu", "accelerator"))


def test_the_class_is_graded_with_the_instructors_time_limit(classroom):
    path = classroom["root"] / "autograded" / "endless" / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(path, as_version=4)
    shown = "".join(str(o) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("noise_batch-")
                    for o in c.get("outputs", []))
    assert f"did not finish within {ENDLESS_LIMIT} s" in shown


def test_a_kernel_that_died_at_its_start_is_graded_again_once(monkeypatch, tmp_path):
    from grader.classroom import parallel

    class API:
        def __init__(self, failures):
            self.failures, self.calls = failures, 0

        def autograde(self, assignment, student, force, create):
            self.calls += 1
            if self.calls <= self.failures:  # its kernel lost a port to another worker's kernel
                return {"success": False, "log": "zmq.error.ZMQError: Address already in use", "error": ""}
            return {"success": True, "log": "", "error": ""}

    monkeypatch.chdir(tmp_path)
    for failures, passed, calls in ((1, True, 2), (5, False, 2), (0, True, 1)):
        api = API(failures)
        monkeypatch.setattr(parallel, "_api", lambda root: (api, None))
        assert parallel.autograde_one(str(tmp_path), ASSIGNMENT, "alice")["success"] is passed
        assert api.calls == calls
