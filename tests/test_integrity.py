"""A submission cannot grade itself: every trick here must end in a failed check that says what was found,
and the grading processes must keep working afterwards. Each test grades a real file through the runner."""

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

from grader.engine import runner
from grader.guard import integrity
from grader.catalog import course

EX = dataclasses.replace(course.get("masked_mean"), timeout=4)
# A correct body, so that only the trick can make a submission fail.
FIX = """
def _right(x, lengths):
    T = x.shape[1]
    mask = (torch.arange(T, device=x.device)[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(1) / lengths[:, None].to(x.dtype)
"""


def grade(tmp_path, body: str, device="cpu", ex=EX):
    f = tmp_path / "attempt.py"
    f.write_text("import torch\n" + FIX + textwrap.dedent(body))
    return runner.grade(ex, f, device=device)


def messages(g) -> str:
    assert not g.passed, "the trick passed"
    return "\n".join(r.message for r in g.failures)


def test_the_correct_body_passes(tmp_path):
    assert grade(tmp_path, "masked_mean = _right\n").passed


def test_a_fix_that_compiles_is_not_tampering(tmp_path):
    # torch.compile's first use replaces nn.Module.__init__ and __setstate__ with torch's own wrappers: a right
    # fix of fit_line with its loss compiled was refused as tampering (fourteenth session; on CUDA too, in the
    # one-GPU verdict table of that session, as fit_line/right_compiled_loss).
    f = tmp_path / "compiled.py"
    f.write_text(textwrap.dedent("""
        import torch

        def _loss(x, y, w, b):
            return ((x @ w + b - y) ** 2).mean()

        loss_fn = torch.compile(_loss, backend="eager")

        def init_params(n_features, device):
            w = torch.zeros(n_features, device=device, requires_grad=True)
            b = torch.zeros(1, device=device, requires_grad=True)
            return w, b

        def fit(x, y, steps=200, lr=0.1):
            w, b = init_params(x.shape[1], x.device)
            optimizer = torch.optim.SGD([w, b], lr=lr)
            for _ in range(steps):
                optimizer.zero_grad()
                loss_fn(x, y, w, b).backward()
                optimizer.step()
            return w, b
    """))
    g = runner.grade(course.get("fit_line"), f)
    assert g.passed, [r.message for r in g.failures]


@pytest.mark.parametrize("patch, name", [
    ("torch.allclose = lambda *a, **k: True", "torch.allclose"),
    # (torch.Tensor.__eq__ = ... is refused before running now: the source policy refuses writing dunders)
    ("torch.Tensor.cpu = lambda self, *a, **k: self", "torch.Tensor.cpu"),
    ("torch.testing.assert_close = lambda *a, **k: None", "torch.testing.assert_close"),
])
def test_replacing_what_checks_use(tmp_path, patch, name):
    g = grade(tmp_path, f"""
        def masked_mean(x, lengths):
            {patch}
            return x.mean(1)
    """)
    assert f"replaced {name}" in messages(g)


def test_replacing_at_import_time(tmp_path):
    g = grade(tmp_path, "torch.allclose = lambda *a, **k: True\nmasked_mean = lambda x, lengths: x.mean(1)\n")
    assert "replaced torch.allclose" in messages(g)


@pytest.mark.parametrize("line, found", [
    ("import grader.engine.expect as e; e.expect_close = lambda *a, **k: None", "imports grader.engine.expect"),
    ("from _pytest import outcomes", "imports from _pytest"),
    ("import pytest", "imports pytest"),
    ("import sys; sys.modules['grader.engine.expect'].fail = print", "uses sys.modules"),
    ("import gc; everything = gc.get_objects()", "uses gc.get_objects"),
    ("g = __import__('grader.engine.expect')", "uses __import__"),
    ("on_sim = lambda x: x.device.type == 'sim'", "names the simulated accelerator"),
    ("import os; grading = 'PYTEST_CURRENT_TEST' in os.environ", "mentions 'PYTEST_CURRENT_TEST'"),
    ("torch.Tensor.__eq__ = lambda a, b: True", "writes torch.Tensor.__eq__, a special attribute"),
])
def test_reaching_for_the_grader_is_refused_before_running(tmp_path, line, found):
    g = grade(tmp_path, line + "\nmasked_mean = _right\n")
    text = messages(g)
    assert "was not graded" in text and found in text


def test_scan_accepts_ordinary_device_code():
    src = ("import gc, os, sys, torch\nimport numpy as np\nfrom torch import nn\nprint(sys.version, os.getpid())\n"
           "gc.collect()\n")
    assert integrity.scan(src) == []


def test_forging_the_results_channel(tmp_path):
    g = grade(tmp_path, """
        import json, os
        def masked_mean(x, lengths):
            for fd in range(3, 64):
                for check in ("test_ignores_the_padding", "test_runs_on_the_device_of_its_inputs"):
                    try:
                        os.write(fd, (json.dumps({"check": check, "leg": "cpu", "outcome": "passed",
                                                  "message": ""}) + "\\n").encode())
                    except OSError:
                        pass
            return _right(x, lengths)
    """)
    assert "did not send" in messages(g)


def test_forging_then_exiting(tmp_path):
    g = grade(tmp_path, """
        import json, os
        def masked_mean(x, lengths):
            for fd in range(3, 64):
                try:
                    os.write(fd, b'{"collected": []}\\n{"end": 0}\\n')
                except OSError:
                    pass
            os._exit(0)
    """)
    text = messages(g)
    assert "did not send" in text and "ended the grading process" in text


def test_exiting_early(tmp_path):
    g = grade(tmp_path, "import os\ndef masked_mean(x, lengths):\n    os._exit(0)\n")
    assert "ended the grading process after 0 of 4 checks" in messages(g)


def test_killing_itself(tmp_path):
    g = grade(tmp_path, "import os\ndef masked_mean(x, lengths):\n    os.kill(os.getpid(), 9)\n")
    assert "killed by signal 9" in messages(g)


def test_killing_the_grader_is_refused_and_grading_goes_on(tmp_path):
    g = grade(tmp_path, "import os\ndef masked_mean(x, lengths):\n    os.kill(os.getppid(), 9)\n")
    assert "may not signal the grader" in messages(g)
    assert grade(tmp_path, "masked_mean = _right\n").passed


@pytest.mark.timeout(90)  # the runner's own limit is what ends this: a larger one makes this test fail
def test_code_that_swallows_the_time_limit_is_stopped(tmp_path):
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
    """)
    assert "ignored the time limit" in messages(g)


def test_a_loop_that_starts_processes(tmp_path):
    g = grade(tmp_path, """
        import os
        def masked_mean(x, lengths):
            while True:
                os.fork()
    """)
    text = messages(g)
    # Which process hits the limit first is a race: either the limit is named or what was left is counted; on a
    # loaded machine the 64 forks of a process holding torch can outlast the check's time limit instead.
    assert (f"more than {integrity.MAX_PROCESSES} processes" in text or "process(es) running" in text
            or "did not finish within" in text), text
    assert grade(tmp_path, "masked_mean = _right\n").passed  # and the grader is none the worse


def test_a_forked_copy_that_returns_into_the_grader_does_not_grade_on(tmp_path):
    # The child returns into the check as a second copy of the grading process: it must end there, not run
    # the remaining checks and send their results again (refused as forged) or keep the parent waiting.
    g = grade(tmp_path, """
        import os
        def masked_mean(x, lengths):
            pid = os.fork()
            if pid == 0:
                return _right(x, lengths)
            os.waitpid(pid, 0)
            return _right(x, lengths)
    """)
    assert g.passed, messages(g)


def test_a_process_left_running(tmp_path):
    g = grade(tmp_path, """
        import os, time
        def masked_mean(x, lengths):
            if os.fork() == 0:  # (subprocess is refused before running: the source policy runs no programs)
                time.sleep(600)
            return _right(x, lengths)
    """)
    assert re.search(r"left \d+ process\(es\) running", messages(g)), messages(g)


def test_a_huge_allocation(tmp_path):
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            big = torch.ones(10 * 2**30 // 4, device=x.device)
            return _right(x, lengths)
    """)
    assert "more memory than the grader allows" in messages(g)


def test_endless_output(tmp_path):
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            line = "x" * 2**20
            for _ in range(200):
                print(line)
            return _right(x, lengths)
    """)
    assert "File too large" in messages(g)


@pytest.mark.exhaustive
def test_one_submission_graded_twenty_times_gives_one_verdict(tmp_path):
    f = tmp_path / "attempt.py"
    f.write_text((runner.Path(EX.exercise_file)).read_text())
    verdicts = {tuple(sorted((r.check, r.leg, r.outcome) for r in runner.grade(EX, f).results)) for _ in range(20)}
    assert len(verdicts) == 1, verdicts


# Wrong submissions that once passed a check on some draws and not on others (found by tools/determinism.py,
# which grades every submission several times): each check must now give them one outcome.
DRAW_DEPENDENT = ["worker_env/wrong_visible_rank", "find_misplaced/wrong_no_plain_attributes",
                  "nearest_centroid/wrong_loop_over_centroids_item", "per_class_accuracy/wrong_pin_first"]


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", DRAW_DEPENDENT)
def test_a_wrong_submission_fails_the_same_checks_on_every_draw(name):
    exercise, stem = name.split("/")
    path = runner.Path(__file__).parent / "submissions" / exercise / f"{stem}.py"
    outcomes = {tuple(sorted((r.check, r.leg, r.outcome) for r in runner.grade(course.get(exercise), path).results))
                for _ in range(6)}
    assert len(outcomes) == 1, outcomes


def test_the_baseline_sees_a_replaced_function_a_new_method_and_a_changed_check_global(monkeypatch, tmp_path):
    # changed() compares its namespaces in flat passes (module dicts, class views, class sizes): each kind of
    # change must still be found and named, and nothing once it is undone
    import types

    checks = types.ModuleType("test_probe")
    checks.helper = len
    checks.TOLERANCES = {"float32": 1e-5, "sizes": [1, 2]}  # data its source never changes: compared by content
    checks.__file__ = str(tmp_path / "test_probe.py")
    Path(checks.__file__).write_text("TOLERANCES = {'float32': 1e-5, 'sizes': [1, 2]}\n")
    baseline = integrity.Baseline(check_modules=[checks])
    sealed = baseline.sealed()
    assert baseline.changed() == [] and sealed() == []
    monkeypatch.setattr(integrity, "scan", lambda *a, **k: [])
    monkeypatch.setattr(integrity.Baseline, "extra", lambda self: None, raising=False)
    monkeypatch.setattr(checks, "helper", max)
    checks.TOLERANCES["sizes"].append(3)
    found = ["grader.guard.integrity.Baseline.extra", "grader.guard.integrity.scan", "the check module test_probe.TOLERANCES "
             "(what it holds)", "the check module test_probe.helper"]
    assert sorted(baseline.changed()) == found and sorted(sealed()) == found
    monkeypatch.undo()
    checks.TOLERANCES["sizes"].pop()
    assert baseline.changed() == [] and sealed() == []


def test_a_submission_changed_on_disk_is_scanned_again(tmp_path):
    # the compiled, scanned code is kept per process by its source: a new source is never taken for the old one
    from grader.engine.submission import Submission, SubmissionError

    f = tmp_path / "answer.py"
    f.write_text("x = 1\n")
    assert Submission(f).module.x == 1
    assert Submission(f).module.x == 1
    f.write_text("import pytest\nx = 2\n")
    with pytest.raises(SubmissionError, match="imports pytest"):
        Submission(f)
