"""Unit tests of the grader core (legs, course, runner, submission, expect, instruments, integrity, plugin),
fast and in process, written to kill the mutants that the end-to-end suites (test_course, test_integrity,
test_grading_robustness: minutes, through worker processes) let through or take too long to run per mutant.
See benchmarks/results/mutation.md; tools/mutation/run.sh reruns the mutation run."""

from __future__ import annotations

import json
import os
import re
import textwrap
import types

import pytest
import torch

from grader.engine import expect, instruments, legs, plugin, runner
from grader.guard import audit, integrity
from grader.guard import audit_hooks as guard
from grader.catalog import course
from grader.engine.expect import GradeFailure
from grader.engine.submission import Submission, SubmissionError, describe_exception, learner_trace, source_of

aten = torch.ops.aten
pytest_plugins = ["pytester"]


# ------------------------------------------------------------------------------------------------ legs
@pytest.fixture
def two_gpus(monkeypatch):
    monkeypatch.setattr(legs, "accelerator_legs", lambda: ["cuda:0", "cuda:1"])


def test_parse_on_a_cpu_machine(monkeypatch):
    monkeypatch.setattr(legs, "accelerator_legs", lambda: [])
    assert legs.parse("real") == ["cpu"]
    assert legs.parse("cpu") == ["cpu"]
    assert legs.parse(" cpu , cpu,") == ["cpu"]
    assert legs.parse("accelerators") == []
    assert legs.parse("") == []
    assert legs.parse("sim") == ["sim:0", "sim:1"]
    assert legs.parse("sim:1") == ["sim:1"]
    assert legs.parse("sim:1,sim") == ["sim:1", "sim:0"]
    with pytest.raises(legs.LegError, match="this machine has no CUDA GPU"):
        legs.parse("cuda")
    with pytest.raises(legs.LegError, match=r"--device tpu: not a device here; available: cpu, sim"):
        legs.parse("tpu")
    with pytest.raises(legs.LegError, match="process of its own"):
        legs.parse("cpu,sim")
    with pytest.raises(legs.LegError, match="process of its own"):
        legs.parse("sim:0,cpu")


def test_parse_with_two_gpus(two_gpus):
    assert legs.parse("real") == ["cpu", "cuda:0", "cuda:1"]
    assert legs.parse("accelerators") == ["cuda:0", "cuda:1"]
    assert legs.parse("cuda") == ["cuda:0", "cuda:1"]
    assert legs.parse("cuda:1") == ["cuda:1"]
    assert legs.parse("cuda:1,real") == ["cuda:1", "cpu", "cuda:0"]
    with pytest.raises(legs.LegError, match="available: cpu, cuda:0, cuda:1"):
        legs.parse("cuda:2")


def test_accelerator_legs_asks_torch(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert legs.accelerator_legs() == ["cuda:0", "cuda:1"]
    assert legs.real_legs() == ["cpu", "cuda:0", "cuda:1"]
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert legs.accelerator_legs() == ["cuda:0", "cuda:1", "mps"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert legs.accelerator_legs() == ["mps"]


def test_family_and_is_simulated():
    assert legs.family("cpu") == "cpu"
    assert legs.family("cuda:0") == legs.family("sim:1") == legs.family("mps") == "accelerator"
    assert legs.is_simulated("sim") and legs.is_simulated(" sim:0 , sim:1 ,")
    assert not legs.is_simulated("cpu") and not legs.is_simulated("sim,cpu") and not legs.is_simulated("simx")


@pytest.mark.parametrize("spec", ["real", "accelerators", "cpu", "cuda", "cuda:0", "cuda:12", "mps", "sim",
                                  "sim:0", "sim:1", "cpu,cuda:1", " sim ,sim:1"])
def test_parse_syntax_accepts(spec):
    legs.parse_syntax(spec)


@pytest.mark.parametrize("spec, message", [
    ("gpu", "--device gpu: not a device name"), ("cuda:x", "--device cuda:x: not a device name"),
    ("cuda:", "not a device name"), ("sim:2", "not a device name"), ("mps:0", "not a device name"),
    ("", "give at least one device"), (" , ", "give at least one device"),
    ("sim,cpu", "process of its own"), ("cuda:0,sim:1", "process of its own"),
])
def test_parse_syntax_refuses(spec, message):
    with pytest.raises(legs.LegError, match=message):
        legs.parse_syntax(spec)


# ---------------------------------------------------------------------------------------------- course
GOOD = """
[[exercises]]
name = "first"
path = "01_x/first.py"
chapter = "tensors"
title = "First"
teaches = "a bug"
hints = ["one", "two"]
failure = "is on"

[[exercises]]
name = "second"
path = "02_y/second.py"
chapter = "models"
title = "Second"
teaches = "another"
hints = ["h"]
failure = "phrase"
points = 3
legs = ["accelerator"]
broken_on = ["accelerator"]
timeout = 5
"""


def load_toml(tmp_path, text):
    f = tmp_path / "course.toml"
    f.write_text(text)
    return course.load(f)


def test_course_loads_entries_with_defaults(tmp_path):
    first, second = load_toml(tmp_path, GOOD)
    assert (first.name, first.number, second.number) == ("first", 1, 2)
    assert first.hints == ("one", "two") and isinstance(first.hints, tuple)
    assert (first.points, first.legs, first.broken_on, first.timeout) == (1, ("cpu", "accelerator"), ("accelerator",), 20)
    assert (second.points, second.legs, second.broken_on, second.timeout) == (3, ("accelerator",), ("accelerator",), 5)
    assert first.exercise_file == course.ROOT / "exercises" / "01_x" / "first.py"
    assert first.solution_file == course.ROOT / "solutions" / "01_x" / "first.py"
    assert first.grader_file == course.ROOT / "grader" / "checks" / "01_x" / "test_first.py"
    assert first.chapter_file == course.ROOT / "book" / "tensors.md"


def test_course_keeps_where_a_bug_was_reported(tmp_path):
    url = "https://github.com/pytorch/pytorch/issues/1"
    first, second = load_toml(tmp_path, GOOD.replace('failure = "phrase"', f'failure = "phrase"\nreported_in = "{url}"'))
    assert (first.reported_in, second.reported_in) == ("", url)


def test_course_exercise_is_frozen_and_its_number_is_not_part_of_its_identity():
    import dataclasses

    a = exercise()
    assert a.number == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.points = 5
    b = dataclasses.replace(a, number=7)
    assert a == b and hash(a) == hash(b)


def test_course_empty_file_has_no_exercises(tmp_path):
    assert load_toml(tmp_path, "") == ()


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('failure = "is on"\n', ""), r"exercise #1 \(first\) lacks \['failure'\]"),
    (lambda t: t.replace('name = "first"\n', ""), r"exercise #1 \(\?\) lacks \['name'\]"),
    (lambda t: t.replace('failure = "phrase"', 'failure = "phrase"\ncolour = "red"'), r"second: unknown keys \['colour'\]"),
    (lambda t: t.replace('legs = ["accelerator"]', 'legs = ["gpu"]'), "second: unknown leg 'gpu'"),
    (lambda t: t.replace('broken_on = ["accelerator"]', 'broken_on = ["tpu"]'), "second: unknown leg 'tpu'"),
    (lambda t: t.replace('broken_on = ["accelerator"]', 'broken_on = ["cpu"]'), "second: broken_on .* must be among legs"),
    (lambda t: t.replace('hints = ["h"]', "hints = []"), "second: give at least one hint"),
    (lambda t: t.replace('failure = "phrase"', 'failure = "phrase"\nreported_in = "github.com/x/y/issues/1"'),
     "second: reported_in 'github.com/x/y/issues/1' is not an https:// address"),
    (lambda t: t.replace('name = "second"', 'name = "first"'), r"duplicate exercise names: \['first'\]"),
])
def test_course_errors(tmp_path, edit, message):
    with pytest.raises(course.CourseError, match=message):
        load_toml(tmp_path, edit(GOOD))


def test_course_get_and_chapter():
    exercises = course.load()
    assert course.get(exercises[-1].name) is exercises[-1]
    with pytest.raises(KeyError, match="no exercise named 'nope': devcourse list shows every exercise's name"):
        course.get("nope")
    with pytest.raises(KeyError, match="no exercise named 'maskd_mean': did you mean masked_mean"):
        course.get("maskd_mean")
    chapter = exercises[0].chapter
    assert course.for_chapter(chapter) == [e for e in exercises if e.chapter == chapter]
    assert exercises[0] in course.for_chapter(chapter) and course.for_chapter("no-such-chapter") == []


# ---------------------------------------------------------------------------------------------- runner
def exercise(legs_=("cpu", "accelerator"), **kw):
    return course.Exercise(name="e", path="01_x/e.py", chapter="c", title="t", teaches="b", hints=("h",),
                           failure="f", legs=legs_, **kw)


def test_process_specs():
    assert runner.process_specs(exercise()) == [("real", "real"), ("sim", "sim")]
    assert runner.process_specs(exercise(("cpu",), broken_on=("cpu",))) == [("real", "cpu")]
    assert runner.process_specs(exercise(("accelerator",))) == [("real", "accelerators"), ("sim", "sim")]
    assert runner.process_specs(exercise(), "sim:1") == [("sim", "sim:1")]
    assert runner.process_specs(exercise(), "cuda:0") == [("real", "cuda:0")]
    with pytest.raises(legs.LegError):
        runner.process_specs(exercise(), "gpu")


def R(leg, outcome, check="c"):
    return runner.CheckResult(check, leg, outcome)


def test_grade_properties():
    g = runner.Grade(exercise(), "f.py", [R("cpu", "passed"), R("sim:0", "skipped"), R("sim:1", "failed")])
    assert [r.leg for r in g.ran] == ["cpu", "sim:1"]
    assert [r.leg for r in g.failures] == ["sim:1"]
    assert not g.passed and g.legs() == ["cpu", "sim:1"]
    assert g.passed_on("cpu") and not g.passed_on("sim:1") and not g.passed_on("sim:0")
    cpu_only = exercise(("cpu",), broken_on=("cpu",))
    assert runner.Grade(cpu_only, "f.py", [R("cpu", "passed"), R("cpu", "passed", "d")]).passed
    assert not runner.Grade(cpu_only, "f.py", [R("cpu", "skipped")]).passed  # nothing ran: not a pass
    assert not runner.Grade(cpu_only, "f.py").passed


def test_grade_needs_every_leg_family_that_was_asked_for():
    ex = exercise()
    cpu = [R("cpu", "passed")]
    g = runner.Grade(ex, "f.py", cpu)
    assert g.missing_legs() == ["accelerator"] and not g.passed
    assert runner.Grade(ex, "f.py", cpu + [R("sim:0", "skipped")]).missing_legs() == ["accelerator"]
    assert runner.Grade(ex, "f.py", cpu + [R("sim:0", "passed")]).passed
    assert runner.Grade(ex, "f.py", cpu + [R("sim:0+sim:1", "passed")]).missing_legs() == []
    assert runner.Grade(ex, "f.py", [R("sim:1", "passed")]).missing_legs() == ["cpu"]
    assert runner.Grade(ex, "f.py", [R("-", "passed")]).missing_legs() == ["cpu", "accelerator"]
    assert runner.Grade(ex, "f.py", [R("real", "passed")]).missing_legs() == ["cpu", "accelerator"]
    assert runner.Grade(ex, "f.py", cpu, device="cpu").passed
    assert runner.Grade(ex, "f.py", cpu, device="real").missing_legs() == []
    assert runner.Grade(ex, "f.py", cpu, device="cpu,sim").missing_legs() == ["accelerator"]
    assert runner.Grade(ex, "f.py", [R("sim:1", "passed")], device="sim:1").passed
    assert runner.Grade(ex, "f.py", [R("sim:1", "passed")], device=" sim:1 , cuda").missing_legs() == []
    assert runner.Grade(None, "f.py", cpu).missing_legs() == []


def test_grade_check_results_are_frozen_values():
    import dataclasses

    r = runner.CheckResult("c", "cpu", "passed")
    assert (r.message, r.trace) == ("", ()) and r == runner.CheckResult("c", "cpu", "passed") and len({r, r}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.outcome = "failed"


def test_grade_collects_answers(monkeypatch, tmp_path):
    sent = []

    def submit(jobs):
        sent.extend(jobs)
        return [{"results": [{"check": "c", "leg": "cpu", "outcome": "failed", "message": "m",
                              "trace": [[3, "f", "x"], "junk", [1, 2]]},
                             {"check": "d", "leg": None, "outcome": "passed", "message": None}]},
                {"error": "it died"}]

    monkeypatch.setattr(runner.daemon, "submit", submit)
    g = runner.grade(exercise(timeout=7), tmp_path / "s.py")
    assert [(f, j["spec"], j["timeout"], j["submission"]) for f, j in sent] == [
        ("real", "real", 7, str((tmp_path / "s.py").resolve())), ("sim", "sim", 7, str((tmp_path / "s.py").resolve()))]
    assert sent[0][1]["grader"] == str(exercise().grader_file) and sent[0][1]["cwd"] == os.getcwd()
    assert g.results[0] == runner.CheckResult("c", "cpu", "failed", "m", ((3, "f", "x"),))
    assert g.results[1] == runner.CheckResult("d", "-", "passed", "", ())
    assert g.results[2] == runner.CheckResult("(grader process)", "sim", "failed", "the grader could not run: it died")


# ------------------------------------------------------------------------------------------ submission
def write(tmp_path, text, name="sub.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


def test_submission_loads_and_reports_missing_names(tmp_path):
    s = Submission(write(tmp_path, "def f(x):\n    return x + 1\n"))
    assert s.f(1) == 2 and s.display_name == "sub.py" and s.module.__file__ == s.filename
    with pytest.raises(SubmissionError, match=r"sub.py defines no `g`; the exercise asks for it"):
        s.g
    assert Submission(write(tmp_path, "x = 1\n"), display_name="mine.py").display_name == "mine.py"


def test_each_load_of_a_submission_runs_its_own_compiled_code(tmp_path):
    # Every check loads the submission afresh. torch.compile keeps its work on the function's code object and
    # puts the compiled function in the globals of the module that first ran it: a code object shared by two
    # loads made the second call, with the same shapes, name a global only the first load had (a right fix
    # with a compiled loss failed a fresh clone's CI with NameError: __compiled_fn_1_... is not defined).
    f = write(tmp_path, """
        import torch

        def _loss(x, w):
            return ((x @ w) ** 2).mean()

        loss_fn = torch.compile(_loss, backend="eager")

        def fit(x):
            return loss_fn(x, torch.ones(x.shape[1]))
    """)
    x = torch.arange(6.0).reshape(2, 3)
    first, second = Submission(f), Submission(f)
    assert first.fit(x).item() == second.fit(x).item() == 76.5


def test_submission_errors(tmp_path):
    with pytest.raises(SubmissionError, match=r"^nope.py does not exist\.$"):
        Submission(tmp_path / "nope.py")
    with pytest.raises(SubmissionError, match=r"sub.py has a syntax error at line 2: .*: x = = 1\. Fix it"):
        Submission(write(tmp_path, "a = 1\nx = = 1\n"))
    with pytest.raises(SubmissionError, match=r"(?s)was not graded: the grader does not run these constructs.*line 1: imports pytest"):
        Submission(write(tmp_path, "import pytest\n"))
    with pytest.raises(SubmissionError, match=r"running sub.py failed before any check could start: "
                                              r"ZeroDivisionError: division by zero \(line 3, in <module>: `1 / 0`\)"):
        Submission(write(tmp_path, "a = 1\n\n1 / 0\n"))
    with pytest.raises(SubmissionError, match="SystemExit: 3"):
        Submission(write(tmp_path, "raise SystemExit(3)\n"))
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SubmissionError, match="bad.py could not be read"):
        Submission(bad)


def test_notebook_source(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("text"), nbformat.v4.new_code_cell("%timeit 1\nx = 1\n  !ls"),
                nbformat.v4.new_code_cell("y = x + 1")]
    f = tmp_path / "n.ipynb"
    nbformat.write(nb, f)
    assert source_of(f) == "# %timeit 1\nx = 1\n#   !ls\n\ny = x + 1\n"
    assert Submission(f).y == 2


def test_a_notebook_s_lines_are_quoted_from_its_code_not_its_json(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def f(x):\n    return x / 0")]
    f = tmp_path / "n.ipynb"
    nbformat.write(nb, f)
    s = Submission(f)
    try:
        s.f(1)
    except ZeroDivisionError as exc:
        assert describe_exception(exc, s.filename).endswith("(line 2, in f: `return x / 0`)")


def test_learner_trace_and_description(tmp_path):
    f = write(tmp_path, """
        def deep(n):
            if n == 0:
                raise ValueError("bottom")
            return deep(n - 1)
        """)
    s = Submission(f)
    try:
        s.deep(10)
    except ValueError as exc:
        trace = learner_trace(exc, s.filename)
        text = describe_exception(exc, s.filename)
    assert text == "ValueError: bottom (line 4, in deep: `raise ValueError(\"bottom\")`)"
    assert len(trace) == 2 + 1 + 4
    assert trace[:2] == [(5, "deep", "return deep(n - 1)")] * 2
    assert trace[2] == (None, "...", "5 more")
    assert trace[-1] == (4, "deep", 'raise ValueError("bottom")')
    for n, shown in ((6, 7), (7, 7)):  # 7 frames: all shown; 8: two elided
        try:
            s.deep(n)
        except ValueError as exc:
            trace = learner_trace(exc, s.filename)
        assert len(trace) == shown
        assert (None, "...", "2 more") in trace if n == 7 else None not in [f[0] for f in trace]
    assert learner_trace(ValueError("x"), s.filename) == [] and learner_trace(None, s.filename) == []
    assert describe_exception(ValueError("x"), s.filename) == "ValueError: x"
    try:  # a grader's failure raised from the learner's: followed through the chain
        try:
            s.deep(0)
        except ValueError:
            raise GradeFailure("wrapped")
    except GradeFailure as exc:
        assert learner_trace(exc, s.filename) == [(4, "deep", 'raise ValueError("bottom")')]


# ---------------------------------------------------------------------------------------------- expect
def test_fail_and_canonical():
    with pytest.raises(GradeFailure, match="^boom$"):
        expect.fail("boom")
    assert expect.canonical("cuda") == torch.device("cuda", 0)
    assert expect.canonical("cuda:1") == torch.device("cuda", 1)
    assert expect.canonical("cpu") == torch.device("cpu") and expect.canonical("cpu").index is None


def test_error_classifiers():
    for text in ("Expected all tensors to be on the same device", "expected device type cuda",
                 "Expected x to be on cuda", "Use Tensor.cpu() to copy"):
        assert expect.is_device_error(RuntimeError(text)) and expect.is_device_error(TypeError(text))
        assert not expect.is_device_error(ValueError(text))
    assert not expect.is_device_error(RuntimeError("shape mismatch"))
    for text in ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
                 "Input type (torch.FloatTensor) and weight type (torch.sim.FloatTensor) should be the same",
                 "add: expected 'other' to be CUDA, but got CPU",
                 "add: expected 'self' to be a SIM tensor, but got a CPU tensor"):
        assert expect.is_device_error(RuntimeError(text)), text
    for text in ("Input type (double) and bias type (float) should be the same",  # a dtype, not a device
                 "Input type (torch.cuda.DoubleTensor) and weight type (torch.cuda.FloatTensor) should be the same"):
        assert not expect.is_device_error(RuntimeError(text)), text
    assert expect.is_out_of_memory(torch.OutOfMemoryError("x"))
    assert expect.is_out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory"))
    assert not expect.is_out_of_memory(RuntimeError("other"))
    assert expect.simulator_limit(NotImplementedError("no PrivateUse1 hook")) == "no PrivateUse1 hook"
    assert expect.simulator_limit(RuntimeError("PrivateUse1 lacks")) == "PrivateUse1 lacks"
    assert not expect.simulator_limit(ValueError("PrivateUse1")) and not expect.simulator_limit(RuntimeError("x"))
    # A limit the simulator documents is named, with why (grader.simulated.LIMITS).
    assert expect.simulator_limit(RuntimeError("no getNewGenerator hook")).startswith(
        "simulator limit (raw_device_generator):")


@pytest.fixture
def learner(tmp_path):
    return Submission(write(tmp_path, """
        import torch
        def bad(x):
            raise RuntimeError("Expected all tensors to be on the same device, but found two")
        def boom():
            raise ValueError("nope")
        def oom():
            raise torch.OutOfMemoryError("too much")
        def limit():
            raise NotImplementedError("PrivateUse1 has no generator\\nsecond line")
        """))


def test_running_turns_exceptions_into_messages(learner):
    with pytest.raises(GradeFailure) as info:
        with expect.running("boom()", learner, explain_device_error="EXPLAIN"):
            learner.boom()
    assert str(info.value) == "boom() raised ValueError: nope (line 6, in boom: `raise ValueError(\"nope\")`)"
    assert info.value.__suppress_context__
    with pytest.raises(GradeFailure, match=r"(?s)bad\(x\) raised RuntimeError: .*\nEXPLAIN$"):
        with expect.running("bad(x)", learner, explain_device_error="EXPLAIN"):
            learner.bad(torch.ones(1))
    with pytest.raises(GradeFailure) as info:
        with expect.running("bad(x)", learner):
            learner.bad(torch.ones(1))
    assert "\n" not in str(info.value)
    with pytest.raises(GradeFailure, match=r"(?s)oom\(\) raised OutOfMemoryError: too much.*\nYour code asked for "
                                           r"more memory than the grader allows \(4 GiB on each accelerator"):
        with expect.running("oom()", learner, explain_device_error="EXPLAIN"):
            learner.oom()
    with pytest.raises(pytest.skip.Exception, match=r"cannot run limit\(\): PrivateUse1 has no generator\. Not a fault"):
        with expect.running("limit()", learner):
            learner.limit()
    for exc in (GradeFailure("as is"), SubmissionError("as is")):
        with pytest.raises(type(exc), match="^as is$"):
            with expect.running("x", learner):
                raise exc


def test_running_explains_a_device_error_with_a_function_of_it(learner):
    # an explanation that depends on where the stray tensor was is made from the exception itself
    with pytest.raises(GradeFailure, match=r"(?s)bad\(x\) raised RuntimeError: .*\nmade from RuntimeError$"):
        with expect.running("bad(x)", learner, explain_device_error=lambda exc: f"made from {type(exc).__name__}"):
            learner.bad(torch.ones(1))
    with pytest.raises(GradeFailure) as info:  # not a device error: no explanation, the function is not called
        with expect.running("boom()", learner, explain_device_error=lambda exc: 1 / 0):
            learner.boom()
    assert "\n" not in str(info.value)


def test_devices_in_names_the_devices_of_a_device_error():
    found = RuntimeError("Expected all tensors to be on the same device, but found at least two devices, sim:0 and "
                         "sim:1!")
    assert expect.devices_in(found) == ["sim:0", "sim:1"]
    weight = RuntimeError("Expected all tensors to be on the same device, but got weight is on cpu, different from "
                          "other tensors on cuda:1 (when checking argument in method wrapper_CUDA_nll_loss_forward)")
    assert expect.devices_in(weight) == ["cpu", "cuda:1"]


def test_running_verifies_integrity_afterwards(learner, monkeypatch):
    with expect.running("fine()", learner):
        pass
    monkeypatch.setattr(integrity, "baseline", types.SimpleNamespace(changed=lambda: ["torch.allclose"]))
    with pytest.raises(GradeFailure, match="your code replaced torch.allclose"):
        with expect.running("fine()", learner):
            pass


def test_expect_other_device_current(monkeypatch, learner):
    """Learner code runs with another device of the leg's kind current: :1 on a :0 leg, :0 on any other leg;
    nothing changes on the CPU, for an index-less device, or where the kind has one device."""
    import contextlib

    chosen, count = [], [2]
    monkeypatch.setattr(torch.accelerator, "device_index", lambda i: chosen.append(i) or contextlib.nullcontext(i))
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda *a: torch.device("cuda"))
    monkeypatch.setattr(torch.accelerator, "device_count", lambda: count[0])
    for leg, other in ((torch.device("cuda", 0), 1), (torch.device("cuda", 1), 0), (torch.device("cuda", 3), 0)):
        with expect.other_device_current(leg) as ctx:
            assert ctx == other
    assert chosen == [1, 0, 0]
    for leg in (torch.device("cpu"), torch.device("cuda"), torch.device("mps", 0), None):
        assert isinstance(expect.other_device_current(leg), contextlib.nullcontext)
    count[0] = 1  # one GPU: the leg's is the only one
    assert isinstance(expect.other_device_current(torch.device("cuda", 0)), contextlib.nullcontext)
    count[0] = 2
    chosen.clear()
    monkeypatch.setattr(expect, "LEG", [torch.device("cuda", 0)])  # what the plugin sets for a check's leg
    with expect.running("fine()", learner):
        pass
    assert chosen == [1]


def test_expect_keep_busy(monkeypatch):
    import contextlib

    slept, on = [], []
    monkeypatch.setattr(torch.cuda, "_sleep", slept.append)
    # on the leg's device, whichever is current (learner code runs with another one current)
    monkeypatch.setattr(torch.cuda, "device", lambda d: on.append(d) or contextlib.nullcontext())
    expect.keep_busy(torch.device("cuda", 1))
    assert slept == [200_000_000] and on == [torch.device("cuda", 1)]
    with instruments.measure("cpu") as m:
        expect.keep_busy(torch.device("cpu"))
    assert m.kernels == 0 and slept == [200_000_000]
    meta = torch.device("meta")
    with instruments.measure(meta) as start:
        torch.ones(64, device=meta)
    with instruments.measure(meta) as m:
        expect.keep_busy(meta)
    assert m.kernels == start.kernels + 64 and slept == [200_000_000]


def test_expect_once_per_leg_runs_the_program_once_per_file_and_device():
    runs = []

    @expect.once_per_leg
    def trained(submission, device):
        runs.append((submission.filename, device))
        if submission.filename == "broken.py":
            expect.fail(f"train raised on {device}")
        if submission.filename == "skipped.py":
            pytest.skip("a simulator limit")  # not the program's verdict: asked again by the next check
        return object()

    a, b = types.SimpleNamespace(filename="a.py"), types.SimpleNamespace(filename="a.py")  # one fixture per check
    cpu, meta = torch.device("cpu"), torch.device("meta")
    first = trained(a, cpu)
    assert trained(b, cpu) is first and trained(a, meta) is not first and trained(b, meta) is trained(a, meta)
    assert runs == [("a.py", cpu), ("a.py", meta)] and trained.__name__ == "trained"
    broken = types.SimpleNamespace(filename="broken.py")
    for _ in range(2):  # every check fails with the run's own message; the program ran once
        with pytest.raises(GradeFailure, match=r"^train raised on cpu$"):
            trained(broken, cpu)
    assert runs.count(("broken.py", cpu)) == 1
    skipped = types.SimpleNamespace(filename="skipped.py")
    for _ in range(2):
        with pytest.raises(pytest.skip.Exception):
            trained(skipped, cpu)
    assert runs.count(("skipped.py", cpu)) == 2


def test_expect_forward_passes_of_a_module_or_of_a_class():
    from torch import nn

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.ones(2, 3)
    with expect.forward_passes(model) as forwards:
        model(x)
        with torch.no_grad():
            model(x)
        model[0](x)  # a part of it, not the model: not its forward pass
    assert forwards == [expect.Forward(torch.device("cpu"), True), expect.Forward(torch.device("cpu"), False)]
    with expect.forward_passes(nn.Identity) as forwards:
        nn.Identity()(3)  # a first input that is not a tensor: no device
    assert forwards == [expect.Forward(None, True)]
    started = []
    with expect.forward_passes(nn.Linear, first=lambda m: started.append(m.weight.detach().clone())) as forwards:
        other = nn.Linear(3, 1)  # made inside, as a learner's program makes its model
        with torch.no_grad():
            other.weight.zero_()
        other(torch.ones(1, 3))
        model(x)
    assert [f.device for f in forwards] == [torch.device("cpu")] * 3 and len(started) == 1
    assert torch.equal(started[0], torch.zeros(1, 3))  # the weights the first forward pass started from
    model(x)
    other(torch.ones(1, 3))
    assert len(forwards) == 3  # the hooks are gone after the block


def test_expect_tensor_and_device():
    t = torch.ones(2)
    assert expect.expect_tensor(t, "out") is t
    with pytest.raises(GradeFailure, match=r"^out should be a tensor, but it is None \(is a return statement missing\?\)\.$"):
        expect.expect_tensor(None, "out")
    with pytest.raises(GradeFailure, match=r"^out should be a tensor, but it is a list\.$"):
        expect.expect_tensor([1], "out")
    expect.expect_device(t, "cpu", "out", "FIX")
    with pytest.raises(GradeFailure, match=r"^out is on cpu, but it should be on meta: FIX$"):
        expect.expect_device(t, "meta", "out", "FIX")
    with pytest.raises(GradeFailure, match="should be a tensor"):
        expect.expect_device(3, "cpu", "out", "FIX")


def test_expect_close():
    e = torch.zeros(3)
    expect.expect_close(e + 5e-6, e, "out")
    expect.expect_close(torch.full((3,), 100.0) + 5e-3, torch.full((3,), 100.0), "out")  # within rtol
    expect.expect_close(e.double(), e, "out")
    with pytest.raises(GradeFailure, match=r"^out has the wrong values \(largest difference 2e-05\): the fix changed"):
        expect.expect_close(e + 2e-5, e, "out")
    with pytest.raises(GradeFailure, match=r"largest difference 2\.5\)"):
        expect.expect_close(torch.tensor([1.0, 3.5]), torch.tensor([1.0, 1.0]), "out")
    with pytest.raises(GradeFailure, match="wrong values"):  # 50 % off: far beyond the default rtol
        expect.expect_close(torch.full((2,), 150.0), torch.full((2,), 100.0), "out")
    with pytest.raises(GradeFailure, match=r"^out has shape \(2,\), expected \(3,\)\.$"):
        expect.expect_close(torch.zeros(2), e, "out")
    expect.expect_close(e + 0.5, e, "out", atol=1.0)
    with pytest.raises(GradeFailure, match="should be a tensor"):
        expect.expect_close(None, e, "out")


def test_no_round_trips_fails_with_the_counts(monkeypatch):
    with expect.no_round_trips(torch.device("cpu"), "f(x)") as m:
        torch.ones(2).sum().item()
    assert m.round_trips == 0

    class Fake(instruments.Measurement):
        @property
        def round_trips(self):
            return 2

    monkeypatch.setattr(expect, "measure", lambda device: _fake_measure(Fake(torch.device("meta"), host_reads=2)))
    with pytest.raises(GradeFailure, match=r"^f\(x\) made 2 reads of a meta value by Python .*: each one makes "
                                           r"Python wait for meta\. Keep the work"):
        with expect.no_round_trips(torch.device("meta"), "f(x)"):
            pass


class _fake_measure:
    def __init__(self, m):
        self.m = m

    def __enter__(self):
        return self.m

    def __exit__(self, *a):
        return False


# ----------------------------------------------------------------------------------------- instruments
def test_measurement_arithmetic_and_description():
    c = instruments.Copy("meta", "cpu", 16)
    m = instruments.Measurement(torch.device("meta"))
    assert m.describe_round_trips() == "nothing" and m.round_trips == 0 and m.syncs == 0 and m.peak_bytes is None
    m.d2h += [c]
    m.host_reads = 1
    m.data_dependent += ["nonzero", "masked_select"]
    assert m.round_trips == 2 and m.syncs == 4
    assert m.describe_round_trips() == ("1 copy from meta to the CPU (16 bytes) and 1 read of a meta value by Python "
                                        "(.item(), int(), float(), bool(), .tolist() or an if on a tensor)")
    m.d2h += [instruments.Copy("meta", "cpu", 4)]
    m.host_reads = 3
    assert m.describe_round_trips().startswith("2 copies from meta to the CPU (20 bytes) and 3 reads of")
    m.host_reads = 0
    assert m.describe_round_trips() == "2 copies from meta to the CPU (20 bytes)"


def test_counter_copy_records_are_frozen_and_counting_never_breaks_the_code(monkeypatch):
    import dataclasses

    c = instruments.Copy("sim:0", "cpu", 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.nbytes = 5
    assert len({c, instruments.Copy("sim:0", "cpu", 4)}) == 1

    def broken(*a):
        raise RuntimeError("a bug in the counting")

    monkeypatch.setattr(instruments.CountingMode, "_note", broken)
    with instruments.measure("cpu") as m:
        y = torch.ones(2) * 3
    assert y.tolist() == [3.0, 3.0] and m.kernels == 0


def test_counter_dispatch_is_not_wrapped_for_dynamo():
    # A mode that lets torch wrap its __torch_dispatch__ (to keep torch.compile out) imports torch._dynamo
    # (seconds) in every grading worker; the counter opts out, so its method is its own, unwrapped.
    raw = instruments.CountingMode.__dict__["__torch_dispatch__"]
    assert raw.__code__.co_filename == instruments.__file__ and not hasattr(raw, "__wrapped__")


def counter(device="meta"):
    m = instruments.Measurement(torch.device(device))
    return m, instruments.CountingMode(m)


def test_counter_classifies_copies_reads_and_kernels():
    meta, cpu = torch.empty(4, 2, device="meta"), torch.ones(4, 2)
    m, c = counter()
    c._note(aten._to_copy.default, (meta,), {}, cpu)
    c._note(aten._to_copy.default, (cpu,), {}, meta)
    c._note(aten.copy_.default, (cpu, meta), {}, cpu)
    c._note(aten.copy_.default, (meta, cpu), {}, meta)
    c._note(aten._to_copy.default, (meta,), {}, torch.empty(4, 2, device="meta"))  # same device: a kernel
    assert [(x.src, x.dst, x.nbytes) for x in m.d2h] == [("meta", "cpu", 32), ("meta", "cpu", 32)]
    assert len(m.h2d) == 2 and m.d2d == [] and m.kernels == 1
    c._note(aten._local_scalar_dense.default, (meta,), {}, 1.0)
    c._note(aten._local_scalar_dense.default, (cpu,), {}, 1.0)
    assert m.host_reads == 1 and m.kernels == 1
    c._note(aten.nonzero.default, (meta,), {}, meta)
    c._note(aten.index.Tensor, (meta, [torch.empty(4, dtype=torch.bool, device="meta")]), {}, meta)
    c._note(aten.index.Tensor, (meta, [torch.empty(4, dtype=torch.long, device="meta")]), {}, meta)
    c._note(aten.index.Tensor, (meta, (torch.empty(4, dtype=torch.uint8, device="meta"),)), {}, meta)
    assert m.data_dependent == ["nonzero", "index", "index"] and m.kernels == 5
    c._note(aten.detach.default, (meta,), {}, meta)
    c._note(aten.view.default, (meta, [8]), {}, meta)
    c._note(aten.add.Tensor, (cpu, cpu), {}, cpu)  # not on this device
    c._note(aten.add.Tensor, ({"a": [cpu, (meta,)]},), {}, cpu)  # nested in a dict and a tuple
    assert m.kernels == 6 and m.d2d == []


def test_counter_counts_float64_where_it_comes_onto_the_device():
    # One count for the graders and the doctor: a factory, a conversion or a copy in that makes float64 on the
    # device; work on a float64 tensor already there is not counted again; float64 on the CPU is not the device's.
    m, c = counter()
    f32, f64 = torch.empty(3, device="meta"), torch.empty(3, dtype=torch.float64, device="meta")
    c._note(aten.empty.memory_format, ([3],), {"dtype": torch.float64}, f64)  # torch.zeros(..., float64): a factory
    c._note(aten._to_copy.default, (f32,), {"dtype": torch.float64}, f64)  # x.double()
    c._note(aten._to_copy.default, (torch.ones(3, dtype=torch.float64),), {}, f64)  # copied in
    assert m.float64 == 3
    c._note(aten.add_.Tensor, (f64, f32), {}, f64)  # total += loss
    c._note(aten.copy_.default, (f64, torch.ones(3)), {}, f64)  # into a float64 buffer already there
    c._note(aten._to_copy.default, (f64,), {"device": "meta"}, f64)  # between devices of this kind
    c._note(aten._to_copy.default, (f64,), {}, torch.ones(3, dtype=torch.float64))  # back to the CPU
    c._note(aten.add.Tensor, (f32, f32), {}, f32)
    assert m.float64 == 3 and m.describe_float64() == "3 float64 tensors made on meta"
    m, c = counter("cpu")
    c._note(aten._to_copy.default, (torch.ones(3),), {"dtype": torch.float64}, torch.ones(3, dtype=torch.float64))
    assert m.float64 == 0


def test_counter_between_devices_and_on_the_cpu():
    m, c = counter()
    a, b = torch.empty(2, device="meta"), torch.empty(2, device="meta")
    b2 = types.SimpleNamespace()  # not a tensor: no copy recorded
    c._note(aten._to_copy.default, (a,), {}, b2)
    assert m.d2h == m.h2d == m.d2d == []
    m, c = counter("cpu")
    c._note(aten.add.Tensor, (torch.ones(1),), {}, torch.ones(1))
    c._note(aten.nonzero.default, (torch.ones(1),), {}, torch.ones(1))
    c._note(aten._local_scalar_dense.default, (torch.ones(1),), {}, 1.0)
    c._note(aten.add.Tensor, (torch.ones(1),), {}, 3)  # no tensor out: nothing on the cpu
    assert (m.kernels, m.data_dependent, m.host_reads) == (2, ["nonzero"], 0)


def test_measure_counts_and_never_breaks_the_code():
    with instruments.measure("cpu") as m:
        x = torch.ones(3)
        y = (x * 2 + 1).sum()
    assert m.device == torch.device("cpu") and m.kernels >= 3 and m.peak_bytes is None and y.item() == 9
    with instruments.measure("meta") as m:
        (torch.empty(3, device="meta") * 2).relu()
    assert m.kernels >= 2 and m.peak_bytes is None
    assert instruments._device_module(torch.device("cpu")) is None


def test_measure_reads_peak_memory_from_the_device_module(monkeypatch):
    calls = []
    mod = types.SimpleNamespace(reset_peak_memory_stats=lambda d: calls.append(("reset", d)),
                                max_memory_allocated=lambda d: 1234.0)
    monkeypatch.setattr(torch, "get_device_module", lambda d: mod)
    with instruments.measure("meta") as m:
        assert calls == [("reset", torch.device("meta"))]
    assert m.peak_bytes == 1234 and isinstance(m.peak_bytes, int)
    monkeypatch.setattr(torch, "get_device_module", lambda d: types.SimpleNamespace(max_memory_allocated=len))
    with instruments.measure("meta") as m:
        pass
    assert m.peak_bytes is None

    def broken(d):
        raise RuntimeError("no module")

    monkeypatch.setattr(torch, "get_device_module", broken)
    assert instruments._device_module(torch.device("meta")) is None


# ------------------------------------------------------------------------------------------- integrity
@pytest.mark.parametrize("line, found", [
    ("import grader.engine.expect", "line 1: imports grader.engine.expect"), ("import os, inspect", "line 1: imports inspect"),
    ("from _pytest import x", "line 1: imports from _pytest"), ("from grader.engine.expect import fail", "line 1: imports from grader.engine.expect"), ("from sys import modules", "line 1: imports sys.modules"),
    ("import sys\nsys._getframe()", "line 2: uses sys._getframe"), ("gc.get_referrers(x)", "line 1: uses gc.get_referrers"),
    ("f = eval", "line 1: uses eval"), ("__import__('os')", "line 1: uses __import__"),
    ("s = 'PYTEST_CURRENT_TEST'", "line 1: mentions 'PYTEST_CURRENT_TEST'"),
    ("d = ' SIM '", "line 1: names the simulated accelerator"), ("d = 'sim:1'", "line 1: names the simulated"),
    ("d = 'PrivateUseOne'", "line 1: names the simulated"), ("torch.sim.synchronize()", "line 1: names the simulated"),
    ("x = m.simulated", "line 1: names the simulated"),
])
def test_scan_finds(line, found):
    assert any(f.startswith(found) for f in integrity.scan(line)), integrity.scan(line)


def test_scan_passes_ordinary_code_and_sorts_by_line():
    assert integrity.scan("import torch, gc, os\ngc.collect()\nx = 'simulation'\ny = 'cuda:1'\nos.getpid()\n") == []
    assert integrity.scan("def (:") == []
    src = "\n" * 9 + "import inspect\n" + "import pytest\n" * 1 + "x = eval\n"
    src = "import pytest\n" + src
    # each finding is 'line N: what: why'
    assert [": ".join(f.split(": ")[:2]) for f in integrity.scan(src)] == [
        "line 1: imports pytest", "line 11: imports inspect", "line 12: imports pytest", "line 13: uses eval"]
    assert integrity.scan("from . import x")[0].startswith("line 1: imports ., a relative import")


def test_check_source_message():
    integrity.check_source("x = 1\n", "f.py")
    with pytest.raises(integrity.IntegrityError) as info:
        integrity.check_source("import pytest\nx = eval\n", "f.py")
    assert str(info.value) == ("f.py was not graded: the grader does not run these constructs (it runs learner code "
                               "inside its own process, so it allows only what it can check):"
                               "\n  line 1: imports pytest: pytest is not among the modules a device fix uses (torch, "
                               "numpy and a few of the standard library's: see grader/guard/policy.py)"
                               "\n  line 2: uses eval: it runs code given as a string, which no check has read; a "
                               "device fix never needs it"
                               "\nWrite these lines another way; print() and the error messages are all a device bug "
                               "needs.")


def test_baseline_names_what_was_replaced(monkeypatch):
    b = integrity.Baseline()
    assert b.changed() == []
    monkeypatch.setattr(legs, "family", lambda leg: "cpu")
    monkeypatch.setattr(torch, "allclose", lambda *a, **k: True)
    monkeypatch.setattr(legs.LegError, "extra", lambda self: 1, raising=False)
    monkeypatch.setattr(legs.LegError, "not_callable", 3, raising=False)
    assert sorted(b.changed()) == ["grader.engine.legs.LegError.extra", "grader.engine.legs.family", "torch.allclose"]


def test_baseline_sees_a_deleted_name(monkeypatch):
    b = integrity.Baseline()
    monkeypatch.delattr(legs, "is_simulated")
    assert b.changed() == ["grader.engine.legs.is_simulated"]


def test_torch_rewrapping_is_not_tampering():
    import functools

    def old():
        pass

    @functools.wraps(old)
    def mine():
        pass

    assert not integrity._torch_rewrapped(mine, old)  # wraps the original, but the code is not torch's
    torch_fn = torch.nn.functional.relu
    fake = types.SimpleNamespace(__wrapped__=old, __code__=torch_fn.__code__)
    assert integrity._torch_rewrapped(fake, old)
    assert not integrity._torch_rewrapped(types.SimpleNamespace(__wrapped__=mine, __code__=torch_fn.__code__), old)
    assert not integrity._torch_rewrapped(types.SimpleNamespace(__wrapped__=old), old)
    # torch's own closure around the original, without __wrapped__ (dynamo's first compile patches
    # nn.Module.__init__ so), is torch's doing; the learner's closure is not
    closure = torch._compile._disable_dynamo(old)
    del closure.__wrapped__
    assert integrity._torch_rewrapped(closure, old)
    assert not integrity._torch_rewrapped(torch._compile._disable_dynamo(mine), old)

    def learners(*args):
        return old(*args)

    assert not integrity._torch_rewrapped(learners, old)


def test_verify_and_tamper_message(monkeypatch):
    monkeypatch.setattr(integrity, "baseline", None)
    integrity.verify()
    monkeypatch.setattr(integrity, "baseline", types.SimpleNamespace(changed=lambda: []))
    integrity.verify()
    names = [f"n{i}" for i in range(8)]
    monkeypatch.setattr(integrity, "baseline", types.SimpleNamespace(changed=lambda: names))
    with pytest.raises(integrity.IntegrityError, match=r"^your code replaced n0, n1, n2, n3, n4, n5 and 2 more, which"):
        integrity.verify()
    assert integrity.tamper_message(names[:6]).startswith("your code replaced n0, n1, n2, n3, n4, n5, which the grader")
    assert "and 1 more" in integrity.tamper_message(names[:7])


def test_guard_processes_default_is_the_documented_limit():
    import inspect

    from grader import ROOT

    documented = ROOT / "grader" / "INTEGRITY.md"
    assert integrity.MAX_PROCESSES == 64 and "refuses more than 64;" in open(documented).read()
    assert inspect.signature(integrity.guard_processes).parameters["limit"].default == integrity.MAX_PROCESSES


def _in_child(body) -> int:
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = body()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_guard_processes_counts_every_descendant():
    def body():
        integrity.guard_processes(limit=3)
        for i in range(3):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        try:
            os.fork()
        except RuntimeError as exc:
            return 10 if "more than 3 processes" in str(exc) else 11
        os._exit(12)

    assert _in_child(body) == 10


def test_guard_processes_shares_its_count_with_children_and_protects_the_parent():
    def body():
        integrity.guard_processes(limit=2)
        pid = os.fork()
        if pid == 0:  # the child's start counts in the parent's budget too
            try:
                os.fork()
            except RuntimeError:
                os._exit(20)
            os._exit(21)
        os.waitpid(pid, 0)
        try:
            os.fork()
        except RuntimeError:
            pass
        else:
            return 30
        for target in (os.getppid(), -os.getppid(), 0):
            try:
                os.kill(target, 0)
            except PermissionError as exc:
                assert "may not signal" in str(exc)
            else:
                return 31
        os.kill(os.getpid(), 0)  # itself: allowed
        return 0

    assert _in_child(body) == 0


# ---------------------------------------------------------------------------------------------- plugin
def test_pairs_and_check_and_leg():
    assert plugin._pairs(["cpu", "sim:0", "sim:1"]) == [("sim:0", "sim:1")]
    assert plugin._pairs(["cuda:0", "cuda:1", "cuda:2", "sim:0", "mps"]) == [("cuda:0", "cuda:1")]
    assert plugin._pairs(["cpu", "cuda:0", "mps"]) == []
    assert plugin._check_and_leg("g/test_x.py::test_values[sim:1]") == ("test_values", "sim:1")
    assert plugin._check_and_leg("g/test_x.py::test_values") == ("test_values", "-")
    assert plugin._check_and_leg("test_x.py::Cls::test_a[cpu]") == ("test_a", "cpu")


def test_limit_device_memory(monkeypatch):
    calls = []
    mod = types.SimpleNamespace(get_device_properties=lambda i: types.SimpleNamespace(total_memory=16 * 2**30),
                                set_per_process_memory_fraction=lambda f, i: calls.append((f, i)))
    monkeypatch.setattr(torch, "get_device_module", lambda d: mod)
    plugin._limit_device_memory(["cpu", "cuda:1", "mps"])
    assert calls == [(0.25, 1)]
    mod.get_device_properties = lambda i: types.SimpleNamespace(total_memory=2**30)
    plugin._limit_device_memory(["cuda:0"])
    assert calls[-1] == (1.0, 0)
    del mod.set_per_process_memory_fraction
    plugin._limit_device_memory(["cuda:0"])
    assert len(calls) == 2


GRADER = '''
import torch
from grader.engine.expect import running, fail


def test_double(submission, device):
    x = torch.ones(2, device=device)
    with running("double(x)", submission):
        out = submission.double(x)
    if out.sum().item() != 4:
        fail("double(x) is wrong")


def test_pair(devices):
    pass


def test_plain():
    pass
'''


@pytest.fixture
def run_grader(pytester, monkeypatch):
    pytester.makepyfile(test_g=GRADER)
    monkeypatch.setattr(integrity, "baseline", None)
    # A grading worker refuses threads its learner code starts and stops at planted hooks: not this test process.
    monkeypatch.setattr(audit, "guard_threads", lambda: None)
    monkeypatch.setattr(guard, "install", lambda: None)  # its audit hook would stay for the rest of this process
    monkeypatch.setattr(audit, "interpreter", None)
    monkeypatch.setattr(audit, "tainted", None)
    # The outer pytest's assertion hooks change under the inner run: guard the grader alone (and torch).
    monkeypatch.setattr(integrity, "GUARDED_PREFIXES", ("grader",))
    # What a worker's warm-up imports, this process may not have yet: a tensor's repr imports it on first use,
    # which the inner run's integrity check would read as the learner's change (tests run alone with -k).
    import torch._subclasses.schema_check_mode  # noqa: F401
    from grader import simulated

    monkeypatch.setattr(torch, "allclose", torch.allclose)  # restored after each test, whatever the learner did
    installs = []  # never install the simulator in this process: record the call instead
    monkeypatch.setattr(simulated, "install", lambda *a, **k: installs.append(a))
    exits = []  # the worker process ends where the plugin calls _exit; this test process must not (its status 0
    monkeypatch.setattr(plugin, "_exit", exits.append)  # would read as a pass): recorded, and refused unless asked

    def run(body, *args):
        sub = pytester.path / "sub.py"
        sub.write_text(textwrap.dedent(body))
        records = []
        result = pytester.runpytest_inprocess(run.file, "--submission", str(sub), *args, "-p", "no:cacheprovider",
                                              plugins=[plugin.ChannelReporter(records.append)])
        assert run.exits_expected or not exits, f"the plugin ended the grading process ({exits}): {records}"
        return result, records

    run.file = "test_g.py"
    run.installs = installs
    run.exits, run.exits_expected = exits, False
    return run


def test_plugin_grades_each_leg_and_reports_records(run_grader):
    result, records = run_grader("def double(x):\n    return x * 2\n", "--device", "cpu")
    result.assert_outcomes(passed=2, skipped=1)
    assert run_grader.installs == []  # real legs: the simulator stays out of the process
    assert records[0] == {"collected": [["test_double", "cpu"], ["test_pair", "pair"], ["test_plain", "-"]]} or \
        records[0] == {"collected": [("test_double", "cpu"), ("test_pair", "pair"), ("test_plain", "-")]}
    by_check = {r["check"]: r for r in records[1:]}
    assert by_check["test_double"]["outcome"] == "passed" and by_check["test_double"]["leg"] == "cpu"
    assert by_check["test_pair"]["outcome"] == "skipped"
    assert by_check["test_pair"]["message"] == "needs two devices of one kind; these legs have none"
    assert len(records) == 4 and all(isinstance(r["seconds"], float) for r in records[1:])
    json.dumps(records)


def test_plugin_failure_messages_and_trace(run_grader):
    result, records = run_grader("def double(x):\n    return helper(x)\ndef helper(x):\n    raise ValueError('no')\n",
                                 "--device", "cpu")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    failed = [r for r in records[1:] if r.get("outcome") == "failed"]
    assert len(failed) == 1
    assert failed[0]["message"] == "double(x) raised ValueError: no (line 4, in helper: `raise ValueError('no')`)"
    assert [tuple(f) for f in failed[0]["trace"]] == [(2, "double", "return helper(x)"), (4, "helper", "raise ValueError('no')")]
    assert "Traceback" not in result.stdout.str() and "double(x) raised ValueError: no" in result.stdout.str()
    _, records = run_grader("def double(x):\n    return x\n", "--device", "cpu")
    assert [r["message"] for r in records[1:] if r.get("outcome") == "failed"] == ["double(x) is wrong"]
    _, records = run_grader("def double(x):\n    return x.no_such_method()\n", "--device", "cpu")
    (msg,) = [r["message"] for r in records[1:] if r.get("outcome") == "failed"]
    assert msg.startswith("double(x) raised AttributeError:") and "line 2, in double" in msg


def test_plugin_broken_submission_and_tampering(run_grader):
    assert torch.allclose(torch.ones(1), torch.ones(1)) is True  # no earlier test left it replaced
    result, records = run_grader("x = = 1\n", "--device", "cpu")
    (msg,) = {r["message"] for r in records[1:] if r.get("outcome") == "failed"}
    assert "has a syntax error at line 1" in msg
    _, records = run_grader("import torch\ntorch.allclose = len\ndef double(x):\n    return x * 2\n", "--device", "cpu")
    msgs = [r["message"] for r in records[1:] if r.get("outcome") == "failed"]
    assert msgs and all(m.startswith("your code replaced torch.allclose") for m in msgs)


def test_plugin_stuck_check_stops_the_rest(run_grader):
    result, records = run_grader("def double(x):\n    while True:\n        pass\n", "--device", "cpu", "--timeout", "1")
    failed = [r for r in records[1:] if r.get("outcome") == "failed"]
    assert failed[0]["message"].startswith("your code did not finish within 1 s on the clock, and it was computing: ")
    assert failed[0]["message"].endswith(" s of CPU time. Look for a loop that never ends.")
    assert [r["check"] for r in failed] == ["test_double", "test_plain"]
    assert failed[1]["message"] == "not tried: an earlier check never finished."


def test_plugin_time_limit_counts_cpu_time_not_the_clock(run_grader):
    # A check may take --cpu-timeout seconds of CPU time: sleeping (no CPU) for longer passes, however busy the
    # machine; a loop that computes is stopped; a wait that never ends is stopped by the clock's --timeout.
    sleeps = "import time\ndef double(x):\n    time.sleep(1.5)\n    return x * 2\n"
    _, records = run_grader(sleeps, "--device", "cpu", "--cpu-timeout", "1", "--timeout", "60", "-k", "test_double")
    assert [r["outcome"] for r in records[1:]] == ["passed"], records
    _, records = run_grader("def double(x):\n    while True:\n        pass\n", "--device", "cpu", "--cpu-timeout",
                            "1", "--timeout", "600", "-k", "test_double")
    assert records[1]["message"] == ("your code did not finish within 1 s of CPU time: it kept computing. Look for a "
                                     "loop that never ends."), records
    waits = "import time\ndef double(x):\n    time.sleep(600)\n"
    _, records = run_grader(waits, "--device", "cpu", "--cpu-timeout", "1", "--timeout", "3", "-k", "test_double")
    assert re.match(r"your code did not finish within 3 s on the clock and used almost no CPU time \(0\.\d s\): it "
                    r"was waiting\. Look for a wait that never returns", records[1]["message"]), records


def test_plugin_busy_loop_stopped_by_the_clock_is_told_as_a_loop(run_grader):
    # On a loaded machine the clock's limit may come before the CPU time's (issue 41): the loop still computed,
    # and the message says so, not that it waited. A CPU limit far above the clock's makes the clock fire first.
    loops = "def double(x):\n    while True:\n        x = x + 1\n"
    _, records = run_grader(loops, "--device", "cpu", "--cpu-timeout", "600", "--timeout", "2", "-k", "test_double")
    message = records[1]["message"]
    assert message.startswith("your code did not finish within 2 s on the clock, and it was computing: "), records
    assert "short of its 600 s because other work kept the machine busy. Look for a loop that never ends." in message
    assert "wait" not in message


def test_plugin_options(run_grader, pytester, monkeypatch):
    result, _ = run_grader("def double(x):\n    return x * 2\n", "--device", "gpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--device gpu: not a device here" in result.stderr.str()
    result = pytester.runpytest_inprocess("test_g.py", "-p", "no:cacheprovider")  # not grading: the plugin is idle
    result.assert_outcomes(passed=1, skipped=1, errors=1) if result.ret else None
    assert "not grading: pass --submission FILE" in result.stdout.str() or result.ret != 0
    from grader import simulated

    monkeypatch.setattr(simulated, "is_supported", lambda: False)
    result, records = run_grader("def double(x):\n    return x * 2\n", "--device", "sim")
    assert run_grader.installs == []
    result.assert_outcomes(passed=1, skipped=3)
    reasons = {r["message"] for r in records[1:] if r.get("outcome") == "skipped"}
    assert reasons == {f"the simulated accelerator needs torch >= 2.11 (this is {torch.__version__})"}
    assert records[0]["collected"][:2] in ([["test_double", "sim:0"], ["test_double", "sim:1"]],
                                           [("test_double", "sim:0"), ("test_double", "sim:1")])


def test_plugin_installs_the_simulator_for_simulated_legs_only(run_grader, monkeypatch):
    from grader import simulated

    monkeypatch.setattr(simulated, "is_supported", lambda: True)
    monkeypatch.setattr(plugin, "_limit_device_memory", lambda legs: None)
    run_grader("def double(x):\n    return x * 2\n", "--device", "sim:1", "--collect-only")
    assert len(run_grader.installs) == 1
    run_grader("def double(x):\n    return x * 2\n", "--device", "accelerators", "--collect-only")  # no legs here
    assert len(run_grader.installs) == 1


def test_plugin_checks_integrity_after_each_check(run_grader, pytester, monkeypatch):
    pytester.makepyfile(test_h="""
        def test_raw(submission):
            submission.sneaky()  # not inside running(): only the plugin's check after the call sees it
        """)
    run_grader.file = "test_h.py"
    result, records = run_grader("import torch\ndef sneaky():\n    torch.allclose = len\n", "--device", "cpu")
    (failed,) = [r for r in records[1:] if r.get("outcome") == "failed"]
    assert failed["message"].startswith("your code replaced torch.allclose, which the grader relies on.")


# ---- the plugin's decisions that its first tests let through (issue 31: a rerun of plugin.py's mutants)
def test_plugin_error_line_is_the_line_that_names_the_exception():
    text = "Traceback (most recent call last):\n  File 'x.py', line 1\nE   ModuleNotFoundError: No module named 'y'\n"
    assert plugin.last_error_line(text) == "ModuleNotFoundError: No module named 'y'"
    assert plugin.last_error_line("E   first\nE   ValueError: last\n  tail\n") == "ValueError: last"
    assert plugin.last_error_line("no marked line\nsecond\n  last one  \n") == "last one"
    assert plugin.last_error_line("  \n") == "(no error text)"


def test_plugin_counts_a_skip_only_when_the_grader_raised_it(run_grader, pytester):
    pytester.makepyfile(test_s="""
        import pytest

        from grader.engine.expect import skip_leg

        def test_limit(submission, device):
            skip_leg("the simulator cannot show this")

        def test_other_skip(submission, device):
            pytest.skip("not through skip_leg")  # as a skip the learner's code raised
        """)
    run_grader.file = "test_s.py"
    _, records = run_grader("def double(x):\n    return x * 2\n", "--device", "cpu")
    by_check = {r["check"]: r for r in records[1:]}
    assert (by_check["test_limit"]["outcome"], by_check["test_limit"]["message"]) == (
        "skipped", "the simulator cannot show this")
    assert by_check["test_other_skip"]["outcome"] == "failed"
    assert by_check["test_other_skip"]["message"].startswith("something your code raised skipped this check")


def test_plugin_teardown_clears_the_leg_and_the_cpu_alarm(run_grader, monkeypatch):
    import signal

    real = signal.signal
    installed = []  # the grader's CPU-time handler is installed only where a CPU-time limit is asked for
    monkeypatch.setattr(signal, "signal", lambda sig, handler: installed.append((sig, handler)))
    run_grader("def double(x):\n    return x * 2\n", "--device", "cpu", "-k", "test_double")
    assert (signal.SIGPROF, plugin._cpu_alarm) not in installed
    monkeypatch.setattr(signal, "signal", real)
    _, records = run_grader("def double(x):\n    return x * 2\n", "--device", "cpu", "-k", "test_double",
                            "--cpu-timeout", "60", "--timeout", "60")
    assert [r["outcome"] for r in records[1:]] == ["passed"]
    assert expect.LEG[0] is None  # running() of code outside a check reaches no leg's device
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # no CPU-time alarm left for the grader's hooks
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nor pytest-timeout's


def test_plugin_fails_the_check_and_stops_the_grading_when_code_was_planted(run_grader, pytester, monkeypatch):
    import sys

    probe = types.SimpleNamespace(planted=False)
    monkeypatch.setitem(sys.modules, "planted_probe", probe)
    pytester.makepyfile(test_p="""
        import planted_probe

        def test_plants(submission, device):
            submission.double(1)
            planted_probe.planted = True  # as if that call had left a trace function behind

        def test_after(submission, device):
            pass
        """)
    run_grader.file = "test_p.py"

    class Interpreter:  # audit's view of the interpreter, from the moment the check's call planted something
        def changes(self):
            return ["set a trace function (sys.settrace)"] if probe.planted else []

    monkeypatch.setattr(audit, "Interpreter", Interpreter)
    run_grader.exits_expected = True  # the worker process would end there
    _, records = run_grader("def double(x):\n    return x * 2\n", "--device", "cpu")
    want = audit.message(["set a trace function (sys.settrace)"])
    assert [(r.get("check"), r.get("outcome"), r.get("message")) for r in records[1:2]] == [("test_plants", "failed", want)]
    assert records[2] == {"stopped": want} and run_grader.exits[:1] == [0]


def test_plugin_lets_go_of_a_failed_checks_frames(run_grader, pytester, monkeypatch):
    import gc
    import sys

    probe = types.SimpleNamespace(refs=[])  # the check's weak reference to a local of its own frame
    monkeypatch.setitem(sys.modules, "frames_probe", probe)
    pytester.makepyfile(test_f="""
        import weakref

        import frames_probe

        class Held:
            pass

        def hold():
            held = Held()
            frames_probe.refs.append(weakref.ref(held))
            raise KeyError("first")

        def test_holds(submission, device):
            try:
                hold()
            except KeyError:
                submission.double(1)  # its error's __context__ is the KeyError, whose frames hold `held`
        """)
    run_grader.file = "test_f.py"
    _, records = run_grader("def double(x):\n    raise ValueError('no')\n", "--device", "cpu")
    assert records[1]["outcome"] == "failed" and len(probe.refs) == 1
    gc.collect()
    assert probe.refs[0]() is None  # pytest keeps the last exception (sys.last_value), not its frames' locals


def test_plugin_grading_never_builds_pytests_own_failure_report(run_grader, monkeypatch):
    from _pytest import python

    built = []
    monkeypatch.setattr(python.Function, "repr_failure", lambda self, excinfo, *a, **k: built.append(self.name) or "r")
    _, records = run_grader("def double(x):\n    raise ValueError('no')\n", "--device", "cpu", "-k", "test_double")
    assert records[1]["outcome"] == "failed" and records[1]["message"].startswith("double(x) raised ValueError: no")
    assert built == []  # replaced by the learner's message anyway: a grading skips its cost


def test_plugin_imports_a_check_module_with_the_capture_off(run_grader, pytester):
    # What a check module writes while it is imported reaches the worker's own output (whose end the zygote
    # keeps, should the import kill the worker), not pytest's capture; a run that is not a grading keeps it.
    pytester.makepyfile(test_c="""
        print("loading the checks")
        raise RuntimeError("the grader is broken")
        """)
    run_grader.file = "test_c.py"
    result, records = run_grader("def double(x):\n    return x * 2\n", "--device", "cpu")
    assert records == [{"error": "the check module test_c.py could not be loaded: RuntimeError: the grader is broken. "
                                 "That is a fault of the grader, not of your code: please report it."}]
    assert "loading the checks" in result.stdout.str() and "Captured stdout" not in result.stdout.str()
    plain = pytester.runpytest_inprocess("test_c.py", "-p", "no:cacheprovider")  # not a grading
    assert "Captured stdout" in plain.stdout.str()


def test_plugin_fails_a_check_whose_code_raises_what_would_end_the_run(run_grader):
    _, records = run_grader("def double(x):\n    raise KeyboardInterrupt\n", "--device", "cpu", "-k", "test_double")
    assert records[1]["outcome"] == "failed" and records[1]["message"].startswith(
        "your code raised KeyboardInterrupt, which would stop the whole grading run")


def test_expect_within_compares_the_difference_to_the_tolerance():
    assert expect.within(1.0, 1.05, 0.1) and expect.within(-2.0, -2.0, 0.0)
    assert not expect.within(1.0, -1.0, 0.1)  # opposite values: far apart, though their sum is 0
    assert not expect.within(0.5, 0.7, 0.1)


def test_expect_refuse_unawaited_reads_only_where_a_copy_was_read_unawaited():
    expect.refuse_unawaited_reads(types.SimpleNamespace(unawaited_d2h=[]), "f(x)")  # nothing read early: no failure
    with pytest.raises(GradeFailure, match=r"^f\(x\) read a value from a non_blocking copy to the CPU that nothing"):
        expect.refuse_unawaited_reads(types.SimpleNamespace(unawaited_d2h=["line 3"]), "f(x)")


def test_expect_no_round_trips_lets_the_cpu_size_results_by_their_data():
    with expect.no_round_trips(torch.device("cpu"), "f(x)"):  # on the CPU the size is known where it is computed
        torch.nonzero(torch.tensor([1.0, 0.0, 2.0]))
