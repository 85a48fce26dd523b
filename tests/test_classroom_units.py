"""The classroom's modules (grader/classroom: source, answers, metadata, notebook, report, kernel, generate,
engine_grading) in process, value by value, with the engine's grading replaced by recorded grades: what the
nbgrader loop of tests/test_classroom.py relies on (minutes per run), checked exactly here in seconds.
(Written for the mutation report, issue 31: each test fails on mutants that the loop's shapes let through.)"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from pathlib import Path

import nbformat
import pytest

from grader.engine import runner, settings
from grader.catalog import course
from grader.classroom import answers, blocks, engine_grading, generate, kernel, notebook, report, source
from grader.engine.runner import CheckResult, Grade

MM, NB = course.get("masked_mean"), course.get("noise_batch")
PLAIN = "test_runs_on_the_device_of_its_inputs"  # one of masked_mean's checks that measure no copies
COST = "test_does_not_move_data_back_and_forth"


def grade_of(ex, *results, file=Path("answer.py")):
    return Grade(ex, file, list(results))


PASSING = [CheckResult(PLAIN, "cpu", "passed"), CheckResult(PLAIN, "sim:0", "passed"), CheckResult(COST, "sim:0", "passed")]
FAILING = [CheckResult(PLAIN, "cpu", "passed"), CheckResult(PLAIN, "sim:0", "failed", "result on the CPU, not sim:0"),
           CheckResult(PLAIN, "sim:1", "failed", "result on the CPU, not sim:0"), CheckResult(COST, "sim:0", "passed")]


# ------------------------------------------------------------------------------------ source
def test_a_program_splits_into_its_docstring_and_its_code():
    text = '"""Title line.\n\nMore.\n\nCheck your fix with:\n    devcourse check x\n"""\n\n\nimport torch\nx = 1\n\n'
    assert source.split_text(text) == ("Title line.\n\nMore.", "import torch\nx = 1\n")
    assert source.split_text("import torch\n") == ("", "import torch\n")  # no docstring: all code
    assert source.split_text("print('hi')\nx = 1\n") == ("", "print('hi')\nx = 1\n")  # an expression is code
    assert source.split_text("\n\nx = 1") == ("", "x = 1\n")
    assert source.split_text("") == ("", "\n")
    assert source.split_text('"""Only a docstring."""\n') == ("Only a docstring.", "\n")


def test_the_shipped_program_gives_the_explanation_the_bug_and_the_fix():
    doc, code = source.split_text(source.shipped_text(NB))
    assert source.docstring(NB) == doc and source.broken_code(NB) == code
    assert "Check your fix with" not in doc and doc.strip()
    assert source.solution_code(NB) == source.split_docstring(NB.solution_file)[1] != code
    assert source.magic_line(NB) == "%%answer noise_batch"
    assert source.source_answer(NB) == (f"%%answer noise_batch\n### BEGIN SOLUTION\n{source.solution_code(NB)}"
                                        "### END SOLUTION")
    assert source.released_answer(NB) == f"%%answer noise_batch\n{code}".rstrip("\n")


def test_an_answer_cell_is_graded_as_a_file_with_the_cells_line_numbers():
    assert source.answer_code("noise_batch", "%%answer noise_batch\nx = 1") == "# the answer cell of noise_batch\nx = 1\n"
    assert source.answer_code("noise_batch", "  %%answer noise_batch  \nx = 1") == "# the answer cell of noise_batch\nx = 1\n"
    assert source.answer_code("noise_batch", "x = 1\ny = 2") == "x = 1\ny = 2\n"  # the magic line was deleted


# ------------------------------------------------------------------------------------ answers
def test_answers_are_split_into_even_batches_of_at_most_the_batch_size():
    assert answers.BATCH_SIZE == 12
    assert answers._split([], 12) == []
    assert [len(b) for b in answers._split(list(range(12)), 12)] == [12]
    assert [len(b) for b in answers._split(list(range(13)), 12)] == [7, 6]
    assert [len(b) for b in answers._split(list(range(25)), 12)] == [9, 9, 7]
    assert answers._split(list(range(5)), 2) == [[0, 1], [2, 3], [4]]
    assert answers.default_jobs() == (os.cpu_count() or 1) + 1


def test_where_the_cores_are_unknown_two_batches_are_graded_at_once(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert answers.default_jobs() == 2


WAIT = 60  # seconds: the recorded gradings take milliseconds; a grading that never comes fails the test


def graded(grades, name, code):
    """grades.grade(name, code), with a limit."""
    return grades.submit(name, code).result(WAIT)


@pytest.fixture
def recorded_grading(monkeypatch):
    """runner.grade / grade_many replaced: each call recorded as (exercise, [file's text...])."""
    calls = []
    lock = threading.Lock()

    def grade(ex, file, device=None):
        with lock:
            calls.append((ex, [Path(file).read_text()], Path(file).name, "one"))
        return grade_of(ex, CheckResult(PLAIN, "cpu", "passed", Path(file).read_text()), file=file)

    def grade_many(ex, files):
        with lock:
            calls.append((ex, [Path(f).read_text() for f in files], Path(files[0]).name, "batch"))
        return [grade_of(ex, CheckResult(PLAIN, "cpu", "passed", Path(f).read_text()), file=f) for f in files]

    monkeypatch.setattr(runner, "grade", grade)
    monkeypatch.setattr(runner, "grade_many", grade_many)
    monkeypatch.delenv(settings.CHECK_TIMEOUT_VARIABLE, raising=False)
    return calls


def test_each_distinct_answer_is_graded_once_and_every_copy_gets_its_grade(recorded_grading):
    with answers.ClassGrades(jobs=1) as grades:
        folder = grades._folder
        futures = grades.submit_all([("noise_batch", "a"), ("noise_batch", "a"), ("masked_mean", "a"),
                                     ("noise_batch", "b")])
        assert futures[0] is futures[1] and futures[0] is not futures[2]
        assert [f.result(WAIT).results[0].message for f in futures] == ["a", "a", "a", "b"]
        assert grades.grade("noise_batch", "b").results[0].message == "b"  # already made: not graded again
        assert (grades.distinct, grades.asked) == (3, 5)
        assert folder.is_dir()
    assert not folder.exists()  # the answers' files go with the context
    by_exercise = sorted((ex.name, texts, name, kind) for ex, texts, name, kind in recorded_grading)
    assert by_exercise == [("masked_mean", ["a"], "masked_mean.py", "one"),  # a lone answer needs no batch
                           ("noise_batch", ["a", "b"], "noise_batch.py", "batch")]


def test_the_first_batch_of_every_exercise_is_graded_first(recorded_grading):
    many = [("noise_batch", str(i)) for i in range(13)] + [("masked_mean", "x")]
    with answers.ClassGrades(jobs=1) as grades:
        for f in grades.submit_all(many):
            f.result(WAIT)
    order = [(ex.name, len(texts)) for ex, texts, _, _ in recorded_grading]
    assert order == [("noise_batch", 7), ("masked_mean", 1), ("noise_batch", 6)]


def test_the_instructors_time_limit_applies_and_a_failed_grading_reaches_every_waiter(recorded_grading, monkeypatch):
    monkeypatch.setenv(settings.CHECK_TIMEOUT_VARIABLE, "7")
    with answers.ClassGrades(jobs=1) as grades:
        graded(grades, "noise_batch", "x")
        assert recorded_grading[-1][0].timeout == 7.0

        def broken(ex, file, device=None):
            raise OSError("no worker")

        monkeypatch.setattr(runner, "grade", broken)
        with pytest.raises(OSError, match="no worker"):
            graded(grades, "noise_batch", "y")
        with pytest.raises(KeyError):
            graded(grades, "no_such_exercise", "z")
        grades.after_fork()  # a fresh pool and lock: grading goes on, grades made stay
        assert grades.submit("noise_batch", "x").done()
        monkeypatch.setattr(runner, "grade", lambda ex, f, device=None: grade_of(ex, file=f))
        assert graded(grades, "masked_mean", "new").results == []


def test_closing_cancels_the_gradings_not_started_and_can_be_done_twice(monkeypatch):
    import time

    started, release, calls = threading.Event(), threading.Event(), []

    def grade(ex, file, device=None):
        calls.append(ex.name)
        started.set()
        release.wait(WAIT)
        calls.append(Path(file).exists())  # the answer's file outlives its grading
        return grade_of(ex, file=file)

    monkeypatch.setattr(runner, "grade", grade)
    grades = answers.ClassGrades(jobs=1)
    grades.submit_all([("noise_batch", "a"), ("masked_mean", "b"), ("fit_line", "c")])  # three batches, one at a time
    assert started.wait(WAIT)
    closing = threading.Thread(target=grades.close)
    closing.start()
    deadline = time.monotonic() + WAIT
    while not grades._pool._shutdown and time.monotonic() < deadline:  # close() has begun: the queue is cancelled
        time.sleep(0.01)
    closing.join(0.5)
    assert closing.is_alive()  # close() waits for the grading under way
    release.set()
    closing.join(WAIT)
    assert calls == ["noise_batch", True] and not grades._folder.exists()
    grades.close()  # again (an atexit close after the context's): nothing left to do, no error


# ------------------------------------------------------------------------------------ notebook and metadata
def split_of(ex, *names_points):
    names = [n for n, _ in names_points]
    return [blocks.Block(ex.name, n, p, (n, *names[len(names):])) for n, p in names_points]


def _meta(cell):
    return cell.metadata["nbgrader"]


def test_the_source_notebook_holds_each_exercises_cells_in_order():
    split = {"masked_mean": [blocks.Block("masked_mean", "accelerator", 1.5, ("accelerator", "cpu")),
                             blocks.Block("masked_mean", "copies", 0.5, ("copies", "cpu"))],
             "noise_batch": [blocks.Block("noise_batch", "accelerator", 1, ("accelerator",))]}
    nb = notebook.build("Part one", [("tensors", [NB]), ("mismatch", [MM])], split)
    ids = [c.get("id") for c in nb.cells]
    assert ids == ["intro", "setup", "chapter-tensors", "noise_batch-explanation", "noise_batch-answer",
                   "noise_batch-check", "noise_batch-accelerator", "chapter-mismatch", "masked_mean-explanation",
                   "masked_mean-answer", "masked_mean-check", "masked_mean-accelerator", "masked_mean-copies"]
    assert [c.cell_type for c in nb.cells][:3] == ["markdown", "code", "markdown"]
    assert nb.metadata["kernelspec"] == notebook.KERNELSPEC
    intro = nb.cells[0].source
    assert intro.startswith("# Part one\n\nExercises: `noise_batch`, `masked_mean` (3 points).")
    assert nb.cells[1].source == "%load_ext grader.classroom.kernel"
    answer = nb.cells[4]
    assert answer.source == source.source_answer(NB)
    assert answer.metadata["devcourse"] == {"exercise": "noise_batch", "release": source.released_answer(NB)}
    assert _meta(answer) == {"grade_id": "noise_batch-answer", "locked": False, "schema_version": 3,
                             "solution": True, "grade": False, "task": False}
    assert _meta(nb.cells[3]) == {"grade_id": "noise_batch-explanation", "locked": True, "schema_version": 3,
                                  "solution": False, "grade": False, "task": False}
    assert nb.cells[5].source == "from grader.classroom.kernel import self_check\nself_check('noise_batch')"
    test = nb.cells[11]
    assert _meta(test) == {"grade_id": "masked_mean-accelerator", "locked": True, "schema_version": 3,
                           "solution": False, "grade": True, "task": False, "points": 1.5}
    assert test.source == (f"# masked_mean: {blocks.short_title('accelerator')} (1.5 point(s))\n"
                           "from grader.classroom.kernel import require\n"
                           "require('masked_mean', 'accelerator', 'cpu')")
    explanation = nb.cells[8].source
    assert explanation.startswith(f"## {MM.number}. {MM.title}\n\n**What it teaches:** {MM.teaches}\n\n**")
    assert explanation.endswith(f"Points: {MM.points} — 1.5 for {blocks.TITLES['accelerator']}; "
                                f"0.5 for {blocks.TITLES['copies']} (each also requires what already worked: "
                                "right on the CPU).")
    head, _, rest = source.docstring(MM).partition("\n")
    assert f"**{head.strip()}**\n\n```text\n{rest.strip()}\n```" in explanation
    nbformat.validate(nb)


def test_one_section_has_no_chapter_heading_and_a_block_that_requires_nothing_else_says_so():
    split = {"noise_batch": [blocks.Block("noise_batch", "accelerator", 1, ("accelerator",))]}
    nb = notebook.build("T", [("tensors", [NB])], split)
    assert [c.get("id") for c in nb.cells][:3] == ["intro", "setup", "noise_batch-explanation"]
    assert nb.cells[2].source.endswith(f"Points: {NB.points} — 1 for {blocks.TITLES['accelerator']}.")
    copies_only = {"masked_mean": [blocks.Block("masked_mean", "copies", 2, ("copies", "cpu", "accelerator"))]}
    nb = notebook.build("T", [("mismatch", [MM])], copies_only)
    assert nb.cells[2].source.endswith(f"Points: 2 — 2 for {blocks.TITLES['copies']} (each also requires what "
                                       "already worked: right on the CPU, right on an accelerator).")


def test_the_cell_metadata_check_validates_once_and_refuses_what_nbgrader_refuses():
    from nbgrader.preprocessors import CheckCellMetadata

    from grader.classroom import metadata

    split = {"noise_batch": [blocks.Block("noise_batch", "accelerator", 1, ("accelerator",))]}
    good = notebook.build("T", [("tensors", [NB])], split)
    assert metadata.CheckCellMetadataOnce().preprocess(good, {}) == (good, {})
    assert 3 in metadata._VALIDATORS
    built = metadata._VALIDATORS[3]
    metadata.CheckCellMetadataOnce().preprocess(good, {})
    assert metadata._VALIDATORS[3] is built  # made once
    for broken in ({"points": "one"}, {"grade": "yes"}, {"schema_version": 2}):
        bad = nbformat.from_dict(good)
        bad.cells[3].metadata["nbgrader"].update(broken)
        raised = []
        for step in (CheckCellMetadata(), metadata.CheckCellMetadataOnce()):
            with pytest.raises(Exception) as error:
                step.preprocess(nbformat.from_dict(bad), {})
            raised.append((type(error.value), str(error.value)))
        assert raised[0] == raised[1], broken
    unmarked = nbformat.from_dict(good)
    del unmarked.cells[2].metadata["nbgrader"]  # a cell without nbgrader metadata is not checked
    metadata.CheckCellMetadataOnce().preprocess(unmarked, {})


# ------------------------------------------------------------------------------------ report
def test_the_self_check_report_is_devcourse_checks_report():
    from grader.learner import report as shared

    failing = grade_of(MM, *FAILING[:2], CheckResult(PLAIN, "sim:1", "failed", "result on the CPU, not sim:0",
                                                     trace=((3, "masked_mean", "return x.cpu()"),)))
    text = report.plain(failing)
    assert report._shared() is shared
    assert "result on the CPU, not sim:0" in text and "devcourse hint" not in text  # a terminal command
    assert f"Stuck? {report.stuck(MM)}" in text and "Tensors created inside forward" in report.stuck(MM)
    assert "Traceback in the answer cell" in text and "return x.cpu()" in text
    assert "\x1b[" not in text
    html = report.html(failing)
    assert html.startswith('<pre style="white-space: pre-wrap">') and '<span style="color: #' in html
    assert "result on the CPU, not sim:0" in html
    narrow = report.plain(failing, width=40)
    assert narrow.splitlines()[0] != text.splitlines()[0]  # the table follows the width asked for


def test_without_the_shared_renderer_the_report_is_the_older_table(monkeypatch):
    monkeypatch.setattr(report, "_shared", lambda: None)
    failing = grade_of(MM, *FAILING, CheckResult(PLAIN, "cuda:0", "skipped", "no GPU"),
                       CheckResult(COST, "cuda:0", "skipped", "no GPU"))
    text = report.plain(failing)
    assert text.count("✗ on sim:") == 1 and "✗ on sim:0: result on the CPU, not sim:0" in text
    assert text.count("skipped: no GPU") == 1 and text.count("skipped:") == 1  # the reasons of skipped checks only
    header = text.splitlines()[1]
    assert [w for w in header.replace("|", " ").replace("┃", " ").split()] == ["check", "device", "result"]
    assert "runs on the device of its inputs" in text and "test_runs" not in text
    assert text.rstrip().endswith(f"Not yet. Stuck? {report.stuck(MM)}")
    passing = report.plain(grade_of(MM, *PASSING))
    assert passing.rstrip().endswith(f"✓ masked_mean passes on cpu, sim:0. {MM.points} point(s).")
    html = report.html(grade_of(MM, *FAILING))
    assert "color: #800000" in html or "#800000" in html  # failed rows in red


LONG_CHECK = "test_" + "_".join(["a_check_with_a_very_long_name"] * 6)


@pytest.mark.parametrize("shared", [True, False])
def test_the_report_is_110_columns_wide_and_keeps_long_messages_whole(monkeypatch, shared):
    if not shared:
        monkeypatch.setattr(report, "_shared", lambda: None)
    long_message = "the result " + "is on the CPU " * 12 + "instead of sim:0"
    g = grade_of(MM, CheckResult(LONG_CHECK, "cpu", "passed"), CheckResult(LONG_CHECK, "sim:0", "failed", long_message))
    text = report.plain(g)
    assert long_message in text.splitlines() or any(long_message in line for line in text.splitlines())
    table = [line for line in text.splitlines() if line[:1] in "+|┃│╭╰┏┡└┌├╞"]
    assert table and max(len(line) for line in table) == 110 == max(len(line) for line in report.plain(g, 110).splitlines() if line in table)
    assert report.html(g) == report.html(g, 110) != report.html(g, 109)
    assert report.html(g) != report.html(g, 111)


def test_without_grader_report_the_self_check_falls_back_to_its_own_table(monkeypatch):
    import grader.learner
    from grader.learner import report as shared

    monkeypatch.delattr(shared, "print_grade")  # an older learner CLI: no shared renderer
    assert report._shared() is None
    monkeypatch.delattr(grader.learner, "report")
    monkeypatch.setitem(sys.modules, "grader.learner.report", None)  # no grader.learner.report at all
    assert report._shared() is None
    assert f"Not yet. Stuck? {report.stuck(MM)}" in report.plain(grade_of(MM, *FAILING))


def test_shown_as_text_outside_a_notebook(capsys):
    report.show(grade_of(MM, *FAILING))
    assert capsys.readouterr().out == report.plain(grade_of(MM, *FAILING))


def test_shown_as_text_without_ipython_or_in_a_terminal_ipython(monkeypatch, capsys):
    import IPython

    g = grade_of(MM, *FAILING)
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())  # IPython in a terminal: no kernel
    report.show(g)
    assert capsys.readouterr().out == report.plain(g)
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    report.show(g)
    assert capsys.readouterr().out == report.plain(g)


def test_shown_as_html_with_a_text_alternative_in_a_notebook(monkeypatch):
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Shell", (), {"kernel": object()})())
    monkeypatch.setattr(IPython.display, "display", lambda data, raw: shown.append((data, raw)))
    g = grade_of(MM, *FAILING)
    report.show(g)
    assert shown == [({"text/html": report.html(g), "text/plain": report.plain(g)}, True)]


# ------------------------------------------------------------------------------------ kernel
def test_the_answer_magic_saves_and_runs_nothing(capsys):
    registered = {}

    class Shell:
        def register_magic_function(self, fn, magic_kind, magic_name):
            registered[(magic_kind, magic_name)] = fn

    kernel.load_ipython_extension(Shell())
    assert registered == {("cell", "answer"): kernel.answer}
    assert kernel.answer("  noise_batch ", "raise SystemExit") is None
    assert capsys.readouterr().out.startswith("Saved your answer to noise_batch. It is graded on every device")
    assert kernel._history() == []  # no IPython here


def test_only_a_cell_starting_with_the_exercises_magic_is_its_answer():
    history = ["%%answer noise_batch_two\nx = 1", "%%answer  noise_batch \ny = 2", "%%answer noise_batch extra\nz"]
    assert kernel.answer_source("noise_batch", history) == "# the answer cell of noise_batch\ny = 2\n"
    with pytest.raises(kernel.NotAnswered, match="`%%answer masked_mean`"):
        kernel.answer_source("masked_mean", [])


def test_quiet_keeps_warnings_and_both_stderrs_out_of_the_cell(capfd):
    open_files = len(os.listdir("/proc/self/fd"))
    with kernel.quiet() as sink:
        warnings.warn("hidden", UserWarning)
        print("python stderr", file=sys.stderr)
        os.write(2, b"fd 2\n")
    assert capfd.readouterr().err == "" and sink.getvalue() == "python stderr\n"
    os.write(2, b"after\n")
    print("after too", file=sys.stderr)
    assert capfd.readouterr().err == "after\nafter too\n"  # restored
    assert len(os.listdir("/proc/self/fd")) == open_files  # the scratch file and the saved fd are closed
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.warn("seen", UserWarning)
    assert len(seen) == 1


@pytest.mark.parametrize("broken", ["dup", "dup2", "flush"])
def test_quiet_without_a_file_descriptor_to_redirect_still_keeps_pythons_stderr(monkeypatch, capsys, broken):
    """A kernel whose fd 2 cannot be duplicated (or replaced), or whose stderr cannot be flushed: Python's stderr
    and warnings are still kept out."""
    if broken == "flush":
        monkeypatch.setattr(sys, "stderr", object())  # no flush(): nothing of the fd is touched
        with kernel.quiet() as sink:
            warnings.warn("hidden", UserWarning)
            print("python stderr", file=sys.stderr)
        assert sink.getvalue() == "python stderr\n"
        return
    real = getattr(os, broken)
    closed = []
    monkeypatch.setattr(os, "close", lambda fd: closed.append(fd))

    def refuse(*args):
        raise OSError("no fd 2 here")

    monkeypatch.setattr(os, broken, refuse)
    with kernel.quiet() as sink:
        warnings.warn("hidden", UserWarning)
        print("python stderr", file=sys.stderr)
    monkeypatch.setattr(os, broken, real)
    assert capsys.readouterr().err == "" and sink.getvalue() == "python stderr\n"
    assert len(closed) == (1 if broken == "dup2" else 0)  # a duplicated fd is closed once, not restored


@pytest.fixture
def kernel_grading(monkeypatch, tmp_path):
    calls = []

    def grade(ex, file, device=None):
        calls.append((ex, Path(file)))
        text = Path(file).read_text()
        return grade_of(ex, *(PASSING if "fixed" in text else FAILING), file=file)

    monkeypatch.setattr(runner, "grade", grade)
    monkeypatch.setattr(kernel, "_GRADES", {})
    monkeypatch.setattr(kernel, "_FOLDER", None)
    monkeypatch.delenv(settings.CHECK_TIMEOUT_VARIABLE, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return calls


def test_a_grade_is_made_once_per_answer_and_again_when_fresh(kernel_grading, monkeypatch):
    history = ["%%answer masked_mean\n# fixed"]
    g = kernel.grade("masked_mean", history=history)
    assert kernel.grade("masked_mean", history=history) is g and len(kernel_grading) == 1
    ex, file = kernel_grading[0]
    assert ex is MM and file.name == "masked_mean.py" and file.parent == kernel._FOLDER
    assert file.read_text() == "# the answer cell of masked_mean\n# fixed\n"
    assert kernel.grade("masked_mean", fresh=True, history=history) is not g and len(kernel_grading) == 2
    assert kernel.grade("masked_mean", fresh=True, history=history) and len(kernel_grading) == 2
    kernel.grade("masked_mean", history=["%%answer masked_mean\n# other"])
    assert len(kernel_grading) == 3
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # autograding: the fresh grade, no new one
    key = ("masked_mean", _digest("# the answer cell of masked_mean\n# fixed\n"), True)
    assert kernel.grade("masked_mean", history=history) is kernel._GRADES[key]
    assert len(kernel_grading) == 3
    monkeypatch.setenv(settings.CHECK_TIMEOUT_VARIABLE, "5")
    kernel.grade("masked_mean", history=["%%answer masked_mean\n# timed"])
    assert kernel_grading[-1][0].timeout == 5.0 and kernel_grading[-1][0].name == "masked_mean"
    folder = kernel._FOLDER
    assert kernel._folder() is folder


def _digest(code):
    import hashlib

    return hashlib.sha256(code.encode()).hexdigest()


def test_the_self_check_and_the_test_cells_say_what_the_grade_says(kernel_grading, monkeypatch, capsys):
    monkeypatch.setattr(kernel, "_history", lambda: [])
    kernel.self_check("masked_mean")
    assert capsys.readouterr().out.startswith("no answer to masked_mean was run")
    with pytest.raises(kernel.NotYet, match="no answer to masked_mean was run"):
        kernel.require("masked_mean", "cpu")
    monkeypatch.setattr(kernel, "_history", lambda: ["%%answer masked_mean\n# broken"])
    kernel.self_check("masked_mean")
    assert capsys.readouterr().out == report.plain(kernel.grade("masked_mean"))
    graded_so_far = len(kernel_grading)
    kernel.require("masked_mean", "cpu")
    assert capsys.readouterr().out == "masked_mean: right on the CPU ✓\n"
    assert len(kernel_grading) == graded_so_far  # the test cell reuses the self-check's grade
    with pytest.raises(kernel.NotYet) as failed:
        kernel.require("masked_mean", "accelerator", "cpu")
    assert str(failed.value) == blocks.verdict(MM, FAILING, ("accelerator", "cpu"))[1]
    assert issubclass(kernel.NotYet, AssertionError)
    monkeypatch.setattr(kernel, "_history", lambda: ["%%answer masked_mean\n# fixed"])
    kernel.require("masked_mean", "accelerator", "cpu", "copies", fresh=True)
    assert capsys.readouterr().out.startswith("masked_mean: right on an accelerator, right on the CPU, no needless")
    assert kernel_grading[-1][1].read_text().endswith("# fixed\n")


# ------------------------------------------------------------------------------------ generate
def test_slugs_and_assignment_titles():
    assert generate.slug("Part 1: Where tensors live!") == "part-1-where-tensors-live"
    chapters = generate.assignments(per_chapter=True, only=["noise_batch"])
    (assignment, title, groups), = chapters
    assert assignment == NB.chapter and groups == [(NB.chapter, [NB])]
    assert title == f"{generate.parts()[0][0]}: {NB.chapter.replace('-', ' ')}"
    (assignment, title, groups), = generate.assignments(only=["noise_batch", "masked_mean"])
    assert (assignment, title) == ("part1-where-tensors-live", generate.parts()[0][0])
    assert [(ch, [e.name for e in exs]) for ch, exs in groups] == [(NB.chapter, ["noise_batch"]),
                                                                   (MM.chapter, ["masked_mean"])]
    (later,) = generate.assignments(only=["nested_batch"])  # the parts before it hold none of the chosen
    assert later[0] == "part2-feeding-the-device"
    with pytest.raises(KeyError, match="no exercise named a, b"):
        generate.assignments(only=["noise_batch", "b", "a"])


def test_chapters_missing_from_the_table_of_contents_are_refused(monkeypatch):
    monkeypatch.setattr(generate, "parts", lambda: [("Only part", ["device-mismatch"])])
    with pytest.raises(ValueError, match=r"chapters not in _toc.yml: \['tensors-and-devices'\]"):
        generate.assignments(only=["noise_batch", "masked_mean"])


def test_generate_writes_the_config_and_one_notebook_per_assignment(monkeypatch, tmp_path):
    graded = []

    def grade(ex, file, device=None):
        graded.append((ex.name, Path(file).name, Path(file).read_text()))
        return grade_of(ex, CheckResult(PLAIN, "cpu", "passed"), CheckResult(PLAIN, "sim:0", "failed", "x"))

    monkeypatch.setattr(runner, "grade", grade)
    seen = []
    written = generate.generate(tmp_path / "out" / "course", per_chapter=True, only=["masked_mean", "noise_batch"],
                                course_id="my-course", timeout=77, progress=seen.append)
    assert sorted(graded) == [("masked_mean", "masked_mean.py", source.shipped_text(MM)),
                              ("noise_batch", "noise_batch.py", source.shipped_text(NB))]
    root = tmp_path / "out" / "course"
    assert written == seen == [root / "source" / a / f"{a}.ipynb" for a in (NB.chapter, MM.chapter)]
    config = (root / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'my-course'" in config and "c.Execute.timeout = 77\n" in config
    assert config == generate.CONFIG.format(course_id="my-course", timeout=77)
    nb = nbformat.read(written[1], as_version=4)
    tests = [(_meta(c)["grade_id"], _meta(c)["points"]) for c in nb.cells if _meta(c).get("grade")]
    assert tests == [("masked_mean-accelerator", MM.points)]
    assert generate.split_points([]) == {}
    again = tmp_path / "again"
    for _ in range(2):  # by part of the book, the course's time limit; written again over the same folder
        (one,) = generate.generate(again, only=["noise_batch"])
        assert one == again / "source" / "part1-where-tensors-live" / "part1-where-tensors-live.ipynb"
        assert "c.Execute.timeout = 180\n" in (again / "nbgrader_config.py").read_text()


# ------------------------------------------------------------------------------------ engine_grading
def test_a_test_cell_is_graded_on_the_blocks_of_its_require_call():
    rb = engine_grading.required_blocks
    assert rb("# title\nfrom grader.classroom.kernel import require\nrequire('masked_mean', 'copies', 'cpu')") == (
        "masked_mean", ("copies", "cpu"))
    for bad in ("require('masked_mean')", "require('no_such', 'cpu')", "require('masked_mean', 'gpu')",
                "print('all good')", "require(", "require(name, 'cpu')", "k.require('masked_mean', 'cpu')"):
        with pytest.raises(engine_grading.NotGradable, match="no require"):
            rb(bad)


def test_the_answer_of_an_exercise_is_its_last_answer_cell():
    def code(src, grade_id, solution=True):
        return nbformat.v4.new_code_cell(src, metadata={"nbgrader": {"grade_id": grade_id, "solution": solution}})

    nb = nbformat.v4.new_notebook()
    nb.cells = [code("%%answer masked_mean\nfirst", "masked_mean-answer"),
                code("%%answer noise_batch\nnb", "noise_batch-answer"),
                code("%%answer masked_mean\nlast", "masked_mean-answer"),
                code("x", "masked_mean-check", solution=False),
                code("y", "other"), nbformat.v4.new_markdown_cell("%%answer z", metadata={
                    "nbgrader": {"grade_id": "z-answer", "solution": True}}),
                nbformat.v4.new_code_cell("no metadata")]
    assert engine_grading.answer_cells(nb) == {"masked_mean": "# the answer cell of masked_mean\nlast\n",
                                               "noise_batch": "# the answer cell of noise_batch\nnb\n"}


class _Done:
    def __init__(self, grade):
        self._grade = grade

    def result(self):
        return self._grade


def test_each_test_cell_gets_its_verdict_and_each_self_check_the_report():
    failing, passing = _Done(grade_of(MM, *FAILING)), _Done(grade_of(NB, CheckResult("test_x", "sim:0", "passed")))
    pending = {"masked_mean": failing, "noise_batch": passing}
    verdict = engine_grading.GradeAnswers._verdict
    ok = verdict("noise_batch", ("accelerator",), pending)
    assert (ok.output_type, ok.name, ok.text) == ("stream", "stdout", "noise_batch: right on an accelerator ✓\n")
    no = verdict("masked_mean", ("accelerator", "cpu"), pending)
    text = blocks.verdict(MM, FAILING, ("accelerator", "cpu"))[1]
    assert (no.output_type, no.ename, no.evalue, no.traceback) == ("error", "NotYet", text, [f"NotYet: {text}"])
    assert verdict("masked_mean", ("cpu",), pending).output_type == "stream"
    assert verdict("", ("cpu",), pending).evalue.startswith("this test cell was not written by devcourse classroom")
    assert verdict("fit_line", ("cpu",), pending).evalue == (
        "fit_line: the submission has no answer cell for it (grade id fit_line-answer)")
    shown = engine_grading.GradeAnswers._report("masked_mean", pending)
    assert shown.output_type == "display_data"
    assert shown.data == {"text/html": report.html(failing.result()), "text/plain": report.plain(failing.result())}
    assert engine_grading._REPORTS[failing] == shown.data
    engine_grading._REPORTS[failing]["text/plain"] = "rendered once"
    assert engine_grading.GradeAnswers._report("masked_mean", pending).data["text/plain"] == "rendered once"
    absent = engine_grading.GradeAnswers._report("fit_line", pending)
    assert (absent.output_type, absent.text) == (
        "stream", "fit_line: the submission has no answer cell for it (grade id fit_line-answer)\n")


def test_without_a_shared_run_a_process_keeps_its_own_class_grades(monkeypatch):
    monkeypatch.setattr(engine_grading, "SHARED", None)
    registered = []
    monkeypatch.setattr("atexit.register", registered.append)
    grades = engine_grading._shared()
    try:
        assert isinstance(grades, answers.ClassGrades) and engine_grading._shared() is grades
        assert registered == [grades.close]
    finally:
        grades.close()


# ------------------------------------------------------------------------------------ a gradebook, without nbgrader's CLI
@pytest.fixture(scope="module")
def _course_template(tmp_path_factory):
    """A course folder whose gradebook holds one notebook: a masked_mean answer, two test cells written by
    `devcourse classroom generate` and one that was not; two submissions."""
    from nbgrader.api import Gradebook

    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"  # nbgrader runs its alembic
    root = tmp_path_factory.mktemp("template") / "course"
    root.mkdir()
    url = f"sqlite:///{root / 'gradebook.db'}"
    tests = {"masked_mean-accelerator": "# t\nfrom grader.classroom.kernel import require\n"
                                        "require('masked_mean', 'accelerator', 'cpu')",
             "noise_batch-accelerator": "require('noise_batch', 'accelerator')",
             "by-hand": "assert 1 + 1 == 2"}
    with Gradebook(url, "device-course") as gb:
        gb.add_assignment("a1")
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("masked_mean-answer", "nb", "a1", max_score=0, cell_type="code")
        gb.add_solution_cell("masked_mean-answer", "nb", "a1")
        gb.add_source_cell("masked_mean-answer", "nb", "a1", cell_type="code", source="%%answer masked_mean\nx")
        for name, text in tests.items():
            gb.add_grade_cell(name, "nb", "a1", max_score=1, cell_type="code")
            gb.add_source_cell(name, "nb", "a1", cell_type="code", locked=True, source=text)
    for student, code in (("ann", "%%answer masked_mean\nann's fix"), ("bob", "%%answer masked_mean\nbob's fix")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(code, metadata={"nbgrader": {"grade_id": "masked_mean-answer",
                                                                         "solution": True}})]
        folder = root / "submitted" / student / "a1"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "nb.ipynb")
    (root / "submitted" / "cid" / "other-assignment").mkdir(parents=True)
    (root / "submitted" / "dan" / "a1").mkdir(parents=True)  # a submission without the notebook
    os.environ["PATH"] = path
    return root


@pytest.fixture
def course_root(_course_template, tmp_path):
    """A copy of the course folder (made once: creating a gradebook takes seconds)."""
    import shutil

    return Path(shutil.copytree(_course_template, tmp_path / "course"))


def test_test_cells_are_read_from_the_gradebook(course_root):
    url = f"sqlite:///{course_root / 'gradebook.db'}"
    assert engine_grading.test_cells(url, "nb", "a1") == {
        "masked_mean-accelerator": ("masked_mean", ("accelerator", "cpu")),
        "noise_batch-accelerator": ("noise_batch", ("accelerator",)), "by-hand": ("", ())}


def test_every_answer_of_the_class_is_started_before_the_first_converter(course_root):
    from grader.classroom import autograde

    class Recorded:
        def submit_all(self, found):
            self.found = found
            return ["future"] * len(found)

    grades = Recorded()
    students = autograde.submitted_students(course_root, "a1")
    assert students == ["ann", "bob", "dan"]
    assert autograde.start_gradings(course_root, "a1", students, grades) == ["future", "future"]
    assert grades.found == [("masked_mean", "# the answer cell of masked_mean\nann's fix\n"),
                            ("masked_mean", "# the answer cell of masked_mean\nbob's fix\n")]
    assert autograde.start_gradings(course_root, "no-such-assignment", students, grades) == []
    autograde.create_students(course_root, ["ann", "eve"])
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}", "device-course") as gb:
        assert sorted(s.id for s in gb.students) == ["ann", "eve"]
    with pytest.raises(FileNotFoundError, match="no submissions of a2 under"):
        autograde.autograde(course_root, "a2", progress=False)


def test_the_course_configuration_and_the_gradebooks_wait_for_busy_writers(tmp_path):
    from grader.classroom import autograde

    assert autograde.load_config(tmp_path) == {}
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'mine'\n"
                                                 "c.CourseDirectory.db_url = 'sqlite:///x.db?mode=rw'\n")
    assert autograde.load_config(tmp_path).CourseDirectory.course_id == "mine"
    api, coursedir = autograde._api(tmp_path)
    assert coursedir.root == str(tmp_path) and coursedir.db_url == f"sqlite:///x.db?mode=rw&timeout={autograde.SQLITE_BUSY_SECONDS}"
    assert api.config.Autograde.sanitize_preprocessors == autograde.SANITIZE_STEPS
    assert api.config.Autograde.autograde_preprocessors == autograde.AUTOGRADE_STEPS
    assert api.config.RestoreCells.add_missing_cells is True
    for url, kept in (("sqlite:///y.db", "sqlite:///y.db?timeout=120"), ("sqlite:///z.db?timeout=5", "sqlite:///z.db?timeout=5"),
                      ("postgresql://db/course", "postgresql://db/course")):
        (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {url!r}\n")
        assert autograde._api(tmp_path)[1].db_url == kept


def test_a_cluster_task_that_died_is_a_failed_submission_and_progress_counts_each():
    from concurrent.futures import Future
    from io import StringIO

    from rich.console import Console

    from grader.classroom import autograde

    ok, died = Future(), Future()
    ok.set_result({"student": "ann", "success": True, "error": "", "log": "", "seconds": 1.0})
    died.set_exception(OSError("node lost"))
    results = list(autograde._finished({ok: "ann", died: "bob"}, lambda futures: iter(futures)))
    assert results[0]["student"] == "ann" and results[1] == {
        "student": "bob", "success": False, "log": "", "seconds": 0.0, "error": "the task failed: OSError: node lost"}
    out = StringIO()
    shown = autograde._show(iter(results), 2, "a1", Console(file=out, width=120, force_terminal=False), progress=True)
    assert shown == results
    text = out.getvalue()
    assert "autograding a1" in text and "2/2" in text and "✗ bob (0.0 s)" in text
    quiet = StringIO()
    autograde._show(iter(results), 2, "a1", Console(file=quiet), progress=False)
    assert quiet.getvalue() == ""


def _where(x):
    return x, os.getpid()


def test_converters_run_in_forks_once_the_started_gradings_are_made(monkeypatch):
    import os as os_mod
    from concurrent.futures import Future

    from grader.classroom import autograde

    made = Future()
    made.set_result(None)
    with autograde._converters(1, [made]) as convert:  # one submission: in this process
        assert list(convert(_where, [(1,), (2,)])) == [(1, os.getpid()), (2, os.getpid())]
    monkeypatch.setattr(os_mod, "cpu_count", lambda: 2)
    with autograde._converters(3, [made]) as convert:
        done = list(convert(_where, [(1,), (2,), (3,)]))
    assert sorted(x for x, _ in done) == [1, 2, 3] and all(pid != os.getpid() for _, pid in done)
    monkeypatch.setattr(os_mod, "cpu_count", lambda: 1)
    with autograde._converters(3, [made]) as convert:
        assert [pid for _, pid in convert(_where, [(1,)])] == [os.getpid()]


def test_a_converter_fork_gets_fresh_threads_for_the_shared_grades(monkeypatch):
    from grader.classroom import autograde

    forked = []
    monkeypatch.setattr(engine_grading, "SHARED", type("G", (), {"after_fork": lambda self: forked.append(1)})())
    autograde._after_fork()
    monkeypatch.setattr(engine_grading, "SHARED", None)
    autograde._after_fork()
    assert forked == [1]


class _RecordedClassGrades:
    """answers.ClassGrades' stand-in for autograde(): an answer whose code says "fix" passes, any other fails,
    at once (no engine); it records what it was asked."""

    made = []

    def __init__(self, jobs=None):
        self.jobs, self.asked, self.distinct, self.started = jobs, 0, 0, []
        _RecordedClassGrades.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def submit(self, name, code):
        return _Done(grade_of(MM, *(PASSING if code.endswith("fix\n") else FAILING)))

    def submit_all(self, found):
        self.started += found
        self.asked, self.distinct = len(found), len(set(found))
        return [self.submit(name, code) for name, code in found]

    def after_fork(self):
        pass


def _scores(root, student):
    """The gradebook's score of each test cell of the student's notebook nb."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "device-course") as gb:
        nb = gb.find_submission_notebook("nb", "a1", student)
        return {g.name: g.score for g in nb.grades if g.max_score}


def _with_checksums(root):
    """The gradebook's cells get the checksums `nbgrader generate_assignment` records: the converter's metadata
    check refuses the test cells it puts back without one."""
    from nbgrader.api import Gradebook
    from nbgrader.utils import compute_checksum

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "device-course") as gb:
        for cell in gb.find_notebook("nb", "a1").source_cells:
            meta = {"grade_id": cell.name, "grade": cell.name != "masked_mean-answer", "locked": cell.locked,
                    "solution": cell.name == "masked_mean-answer", "schema_version": 3, "points": 1}
            cell.checksum = compute_checksum(nbformat.v4.new_code_cell(cell.source, metadata={"nbgrader": meta}))
        gb.db.commit()


def _submit(root, student, code):
    nb = nbformat.v4.new_notebook()
    meta = {"grade": False, "grade_id": "masked_mean-answer", "locked": False, "schema_version": 3, "solution": True,
            "task": False}  # as nbgrader's current metadata format has it (the converter refuses older ones)
    nb.cells = [nbformat.v4.new_code_cell(code, metadata={"nbgrader": meta})]
    folder = root / "submitted" / student / "a1"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "nb.ipynb")


def test_autograde_puts_each_submissions_grade_in_the_gradebook_and_regrades_a_resubmission(course_root, monkeypatch, capsys):
    import time

    from grader.engine import daemon
    from grader.classroom import autograde

    ensured = []
    monkeypatch.setattr(daemon, "ensure", lambda: ensured.append(1))
    monkeypatch.setattr(answers, "ClassGrades", _RecordedClassGrades)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # the converters in this process (forks: the test above)
    _with_checksums(course_root)
    _submit(course_root, "ann", "%%answer masked_mean\nann's fix")
    _submit(course_root, "bob", "%%answer masked_mean\nbob's attempt")
    before = time.monotonic()
    results = autograde.autograde(course_root, "a1")  # every submission, the default console, progress, force
    took = time.monotonic() - before
    assert ensured == [1] and engine_grading.SHARED is None
    assert sorted(r["student"] for r in results) == ["ann", "bob", "dan"]
    assert all(0 <= r["seconds"] <= took for r in results)
    grades = _RecordedClassGrades.made[-1]
    assert grades.jobs is None and [code for _, code in grades.started] == [
        "# the answer cell of masked_mean\nann's fix\n", "# the answer cell of masked_mean\nbob's attempt\n"]
    # masked_mean's points from its grade; noise_batch has no answer cell; a test cell devcourse did not write is not run
    assert _scores(course_root, "ann") == {"masked_mean-accelerator": 1, "noise_batch-accelerator": 0, "by-hand": 0}
    assert _scores(course_root, "bob") == {"masked_mean-accelerator": 0, "noise_batch-accelerator": 0, "by-hand": 0}
    out = capsys.readouterr().out
    assert (f"Grading 3 submission(s) with the grading engine, no notebook run: 2 distinct answer(s) among 2, each "
            f"graded once, in batches of up to {answers.BATCH_SIZE} per exercise, {answers.default_jobs()} at once.") in " ".join(out.split())
    assert "autograding a1" in out and "3/3" in out
    # a resubmission is graded again (force, the default) and only the students named are
    _submit(course_root, "bob", "%%answer masked_mean\nbob's fix")
    assert [r["student"] for r in autograde.autograde(course_root, "a1", ["bob"], workers=3, progress=False)] == ["bob"]
    assert _RecordedClassGrades.made[-1].jobs == 3
    assert _scores(course_root, "bob")["masked_mean-accelerator"] == 1
    assert "3 at once" in " ".join(capsys.readouterr().out.split())
    # without force, what was autograded is neither graded by the engine nor converted again (issue 41: it
    # re-graded everything); a submission newer than its autograded copy is
    made = len(_RecordedClassGrades.made)
    assert autograde.autograde(course_root, "a1", force=False, progress=False) == []
    assert len(_RecordedClassGrades.made) == made
    assert "Skipping 3 submission(s) already autograded" in " ".join(capsys.readouterr().out.split())
    for student, stamp in (("ann", "2026-01-05 10:00:00.000000 UTC"), ("bob", "2026-01-05 10:00:00.000000 UTC")):
        (course_root / "autograded" / student / "a1" / "timestamp.txt").write_text(stamp)
    _submit(course_root, "ann", "%%answer masked_mean\nann's second fix")
    (course_root / "submitted" / "ann" / "a1" / "timestamp.txt").write_text("2026-01-06 10:00:00.000000 UTC")
    results = autograde.autograde(course_root, "a1", force=False, progress=False)
    assert [r["student"] for r in results] == ["ann"] and results[0]["success"], results
    assert [code for _, code in _RecordedClassGrades.made[-1].started] == [
        "# the answer cell of masked_mean\nann's second fix\n"]


def test_one_submission_is_autograded_for_a_student_not_yet_in_the_gradebook_and_again_when_resubmitted(course_root, monkeypatch):
    import time

    from grader.classroom import autograde

    monkeypatch.setattr(engine_grading, "SHARED", _RecordedClassGrades())
    _with_checksums(course_root)
    _submit(course_root, "eve", "%%answer masked_mean\neve's attempt")
    before = time.monotonic()
    first = autograde.autograde_one(str(course_root), "a1", "eve")  # no create_students: the converter makes eve
    assert first["success"] and first["error"] == "" and 0 <= first["seconds"] <= time.monotonic() - before
    assert _scores(course_root, "eve")["masked_mean-accelerator"] == 0
    _submit(course_root, "eve", "%%answer masked_mean\neve's fix")
    assert autograde.autograde_one(str(course_root), "a1", "eve")["success"]
    assert _scores(course_root, "eve")["masked_mean-accelerator"] == 1


def test_a_cluster_gets_one_task_per_submission_keyed_by_assignment_and_student(course_root, monkeypatch):
    import contextlib
    from concurrent.futures import Future
    from io import StringIO

    from rich.console import Console

    from grader.engine import daemon
    from grader.classroom import autograde

    tasks = []

    def submit(fn, key, *args):
        tasks.append((fn, key, args))
        done = Future()
        done.set_result({"student": args[2], "success": True, "error": "", "log": "", "seconds": 0.5})
        return done

    @contextlib.contextmanager
    def cluster(address):
        assert address == "tcp://head:8786"
        yield submit, lambda futures: iter(list(futures))

    monkeypatch.setattr(autograde, "_dask", cluster)
    monkeypatch.setattr(daemon, "ensure", lambda: pytest.fail("a cluster's nodes grade, not this host"))
    out = StringIO()
    results = autograde.autograde(course_root, "a1", ["ann", "bob"], scheduler="tcp://head:8786", force=False,
                                  console=Console(file=out, width=200))
    assert [r["student"] for r in results] == ["ann", "bob"]
    assert tasks == [(autograde.autograde_one, "autograde-a1-ann", (str(course_root.resolve()), "a1", "ann", False)),
                     (autograde.autograde_one, "autograde-a1-bob", (str(course_root.resolve()), "a1", "bob", False))]
    assert "Grading 2 submission(s) on the Dask cluster at tcp://head:8786." in out.getvalue()


def test_a_cluster_is_reached_through_a_dask_client_of_its_scheduler(monkeypatch):
    import dask.distributed

    from grader.classroom import autograde

    made = []

    class Client:
        def __init__(self, address):
            made.append(("client", address))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            made.append("closed")

        def submit(self, fn, *args, **kwargs):
            made.append((fn, args, kwargs))
            return "future"

    monkeypatch.setattr(dask.distributed, "Client", Client)
    with autograde._dask("tcp://head:8786") as (submit, as_completed):
        assert submit(len, "key-1", "ab") == "future" and as_completed is dask.distributed.as_completed
    assert made == [("client", "tcp://head:8786"), (len, ("ab",), {"key": "key-1", "pure": False}), "closed"]


def test_converters_stay_in_this_process_without_a_core_count_or_off_linux(monkeypatch):
    import os as os_mod
    from concurrent.futures import Future

    from grader.classroom import autograde

    made = Future()
    made.set_result(None)
    monkeypatch.setattr(os_mod, "cpu_count", lambda: None)  # unknown: one core
    with autograde._converters(3, [made]) as convert:
        assert [pid for _, pid in convert(_where, [(1,), (2,)])] == [os.getpid()] * 2
    monkeypatch.setattr(os_mod, "cpu_count", lambda: 4)
    monkeypatch.setattr(autograde.sys, "platform", "darwin")  # fork exists there, but is not safe to use
    with autograde._converters(3, [made]) as convert:
        assert [pid for _, pid in convert(_where, [(1,), (2,)])] == [os.getpid()] * 2


def test_every_answer_of_the_class_is_started_from_each_notebook_a_submission_has(course_root):
    from nbgrader.api import Gradebook

    from grader.classroom import autograde

    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}", "device-course") as gb:  # a second notebook
        gb.add_notebook("part2", "a1")
        gb.add_grade_cell("noise_batch-accelerator", "part2", "a1", max_score=1, cell_type="code")
        gb.add_source_cell("noise_batch-accelerator", "part2", "a1", cell_type="code", locked=True,
                           source="require('noise_batch', 'accelerator')")
    part2 = nbformat.v4.new_notebook()
    part2.cells = [nbformat.v4.new_code_cell("%%answer noise_batch\nabe's fix", metadata={
        "nbgrader": {"grade_id": "noise_batch-answer", "solution": True}})]
    (course_root / "submitted" / "abe" / "a1").mkdir(parents=True)
    nbformat.write(part2, course_root / "submitted" / "abe" / "a1" / "part2.ipynb")  # abe handed in part2 only

    class Recorded:
        def submit_all(self, found):
            return found

    assert autograde.start_gradings(course_root, "a1", ["abe", "ann"], Recorded()) == [
        ("noise_batch", "# the answer cell of noise_batch\nabe's fix\n"),
        ("masked_mean", "# the answer cell of masked_mean\nann's fix\n")]


def _cell(source, grade_id=None, kind="code", **flags):
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    meta = {"nbgrader": {"grade_id": grade_id, "solution": False, "grade": False, "locked": False, **flags}} if grade_id else {}
    return make(source, metadata=meta)


def test_deleted_test_cells_are_put_back_after_the_nearest_earlier_cell_still_there(course_root):
    from nbgrader.api import Gradebook

    step = engine_grading.RestoreCells()
    step.notebook_id, step.assignment_id = "nb", "a1"
    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}", "device-course") as gb:
        step.gradebook = gb
        nb = nbformat.v4.new_notebook()
        nb.cells = [_cell("%%answer masked_mean\nx", "masked_mean-answer", solution=True), _cell("assert 1 + 1 == 2", "by-hand", grade=True)]
        step.add_missing_grade_cells(nb, {})
        assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells] == [
            "masked_mean-answer", "masked_mean-accelerator", "noise_batch-accelerator", "by-hand"]
        assert nb.cells[1].source.endswith("require('masked_mean', 'accelerator', 'cpu')")
        nb.cells = [_cell("assert 1 + 1 == 2", "by-hand", grade=True)]  # every earlier cell deleted: at the end
        step.add_missing_grade_cells(nb, {})
        assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells] == [
            "by-hand", "masked_mean-answer", "masked_mean-accelerator", "noise_batch-accelerator"]
        assert nb.cells[1].metadata["nbgrader"]["solution"] is True and nb.cells[2].metadata["nbgrader"]["solution"] is False


def test_grading_a_notebook_writes_each_test_cells_verdict_and_each_self_checks_report(course_root, monkeypatch):
    asked = []

    class Shared:
        def submit(self, name, code):
            asked.append((name, code))
            return _Done(grade_of(MM, *FAILING))

    monkeypatch.setattr(engine_grading, "SHARED", Shared())
    nb = nbformat.v4.new_notebook()
    nb.cells = [_cell("# Title", "intro", kind="markdown", locked=True),
                _cell("%%answer masked_mean\nfix", "masked_mean-answer", solution=True, grade=True),  # as in the gradebook
                _cell("self_check('masked_mean')", "masked_mean-check", locked=True),
                _cell("self_check('noise_batch')", "noise_batch-check", locked=True),
                _cell("x", "setup", locked=True),
                _cell("require(...)", "masked_mean-accelerator", grade=True, locked=True),
                _cell("require(...)", "noise_batch-accelerator", grade=True, locked=True),
                _cell("assert 1 + 1 == 2", "by-hand", grade=True, locked=True),
                _cell("print('mine')"), _cell("masked_mean-check", "masked_mean-check-2", kind="markdown", locked=True),
                _cell("self_check('fit_line')", "fit_line-check", locked=True)]  # no test cell of fit_line
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="old\n")]
    info = {"nbgrader": {"db_url": f"sqlite:///{course_root / 'gradebook.db'}", "notebook": "nb", "assignment": "a1"}}
    out, _ = engine_grading.GradeAnswers().preprocess(nb, info)
    assert asked == [("masked_mean", "# the answer cell of masked_mean\nfix\n")]  # noise_batch has no answer cell
    outputs = {c.metadata.get("nbgrader", {}).get("grade_id", "mine"): c.get("outputs") for c in out.cells}
    text = blocks.verdict(MM, FAILING, ("accelerator", "cpu"))[1]
    assert [(o.output_type, o.get("evalue")) for o in outputs["masked_mean-accelerator"]] == [("error", text)]
    assert outputs["noise_batch-accelerator"][0].evalue == (
        "noise_batch: the submission has no answer cell for it (grade id noise_batch-answer)")
    assert outputs["by-hand"][0].evalue.startswith("this test cell was not written by devcourse classroom generate")
    assert outputs["masked_mean-check"][0].data["text/plain"] == report.plain(grade_of(MM, *FAILING))
    assert outputs["noise_batch-check"][0].text.startswith("noise_batch: the submission has no answer cell")
    for untouched in ("masked_mean-answer", "setup", "mine", "fit_line-check"):
        assert [o.get("text") for o in outputs[untouched]] == ["old\n"], untouched
    assert outputs["intro"] is None and outputs["masked_mean-check-2"] is None
