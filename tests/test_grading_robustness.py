"""Bad learner input is a graded failure with an explanation, never a grader crash."""

import dataclasses
import re
import textwrap

import nbformat
import pytest

from grader.engine import runner
from grader.catalog import course

EX = course.get("masked_mean")
LOOP_LIMIT = 3  # seconds per check where a test waits for the time limit on purpose


def grade_source(tmp_path, source: str, name="attempt.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(source))
    return runner.grade(EX, f, device="cpu")


def only_message(grade) -> str:
    assert not grade.passed
    messages = {r.message for r in grade.failures}
    assert len(messages) == 1, messages
    return messages.pop()


def test_syntax_error(tmp_path):
    g = grade_source(tmp_path, "def masked_mean(x, lengths)\n    return x\n")
    assert "syntax error at line 1" in only_message(g)


def test_missing_function(tmp_path):
    g = grade_source(tmp_path, "def masked_average(x, lengths):\n    return x.mean(1)\n")
    assert "defines no `masked_mean`" in only_message(g)


def test_crash_at_import(tmp_path):
    g = grade_source(tmp_path, "import torch\nraise ValueError('boom')\n")
    msg = only_message(g)
    assert "failed before any check could start" in msg and "ValueError: boom" in msg and "line 2" in msg


def test_exit_in_learner_file(tmp_path):
    g = grade_source(tmp_path, "import sys\nsys.exit(3)\n")
    assert "SystemExit" in only_message(g)


def test_infinite_loop_is_stopped_once(tmp_path):
    f = tmp_path / "attempt.py"
    f.write_text("def masked_mean(x, lengths):\n    while True:\n        pass\n")
    g = runner.grade(dataclasses.replace(EX, timeout=LOOP_LIMIT), f, device="cpu")
    messages = [r.message for r in g.failures]
    # The first check times out; the others fail at once instead of each waiting for the timeout.
    assert f"did not finish within {LOOP_LIMIT} s" in messages[0]
    assert len(messages) == len(g.results) > 1 and all("not tried" in m for m in messages[1:])


def test_native_crash(tmp_path):
    g = grade_source(tmp_path, """
        import os
        def masked_mean(x, lengths):
            os.kill(os.getpid(), 11)  # SIGSEGV, as a crash in native code would
    """)
    assert "killed by signal 11" in only_message(g)


def test_wrong_values_are_named(tmp_path):
    g = grade_source(tmp_path, "def masked_mean(x, lengths):\n    return x.mean(dim=1)\n")
    messages = sorted(r.message for r in g.failures)
    # the first check tries each float dtype and names the first whose values are wrong
    assert len(messages) == 2 and re.match(r"masked_mean of a \w+ batch has the wrong values", messages[0]), messages
    assert messages[1].startswith("masked_mean(x, lengths) has the wrong values (largest difference")


def test_learner_exception_points_at_their_line(tmp_path):
    g = grade_source(tmp_path, "def masked_mean(x, lengths):\n    return x[99]\n")
    msg = {r.message for r in g.failures}.pop()
    assert "IndexError" in msg and "line 2" in msg and "x[99]" in msg


def test_notebook_submission(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# My fix"),
        nbformat.v4.new_code_cell("%matplotlib inline\nimport torch"),
        nbformat.v4.new_code_cell(EX.solution_file.read_text()),
    ]
    path = tmp_path / "attempt.ipynb"
    nbformat.write(nb, path)
    assert runner.grade(EX, path, device="cpu").passed


@pytest.mark.parametrize("which", ["exercise", "solution"])
def test_cli_check_exit_code(which, capsys):
    from grader.cli import main

    args = ["check", "positional_encoding", "--device", "cpu"] + (["--solution"] if which == "solution" else [])
    assert main(args) == (0 if which == "solution" else 1)
    out = capsys.readouterr().out
    assert ("passes on cpu" in out) == (which == "solution")


def test_simulated_leg_is_isolated_from_real_legs(tmp_path):
    # The simulated backend is registered process-wide: only the sim leg's process may see it.
    f = tmp_path / "attempt.py"
    f.write_text(
        "import torch\n"
        "def masked_mean(x, lengths):\n"
        # A registered PrivateUse1 backend is torch's current accelerator before any other; a submission may
        # not name it (nor read torch._C), so the probe asks torch.accelerator, as any device-agnostic code does.
        "    acc = torch.accelerator.current_accelerator()\n"
        "    seen = acc is not None and acc.type not in ('cuda', 'mps', 'xpu', 'mtia', 'hpu')\n"
        "    standard = x.device.type in ('cpu', 'cuda', 'mps', 'xpu', 'mtia', 'hpu')\n"
        "    assert seen != standard, 'simulated backend seen on ' + str(x.device)\n"
        + EX.solution_file.read_text().split("def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:\n")[1]
    )
    grade = runner.grade(EX, f)
    assert grade.passed, grade.failures
    assert {"cpu", "sim:0", "sim:1"} <= set(grade.legs())


def test_exit_during_a_check_is_not_a_pass(tmp_path):
    # Leaving the process early must not turn the checks that never ran into a pass.
    g = grade_source(tmp_path, "import os\ndef masked_mean(x, lengths):\n    os._exit(0)\n")
    assert not g.passed
    assert any("ended the grading process" in r.message or "could not run" in r.message for r in g.failures)


def test_cli_refuses_a_missing_file_and_a_missing_hint(tmp_path, capsys):
    from grader.cli import main

    assert main(["check", "masked_mean", str(tmp_path / "nope.py")]) == 2
    assert "does not exist" in capsys.readouterr().out
    assert main(["hint", "masked_mean", "9"]) == 2
    assert "hints 1 to 3" in capsys.readouterr().out
    assert main(["hint", "masked_mean", "2"]) == 0
    assert "Hint 2 of 3" in capsys.readouterr().out


def test_a_failed_check_leaves_no_dataloader_worker_behind():
    # The shipped gpu_in_workers makes CUDA tensors in a DataLoader's workers: the checks that iterate it fail.
    # The failure must not keep the iterator (and its worker processes) alive past the checks, where they
    # would be counted against the learner as processes left running.
    ex = course.get("gpu_in_workers")
    g = runner.grade(ex, ex.exercise_file)
    assert not g.passed
    assert not [r.message for r in g.failures if "left" in r.message and "process" in r.message]


def test_an_index_out_of_range_fails_on_every_leg_with_a_device_side_assert_on_the_device(tmp_path):
    # As on CUDA, the simulated kernel asserts: the error comes at the next wait for the device, and the
    # grader says what that error means; the CPU names the index.
    f = tmp_path / "attempt.py"
    f.write_text(textwrap.dedent("""
        import torch


        def masked_mean(x, lengths):
            B, T, D = x.shape
            positions = torch.arange(T, device=x.device)
            mask = (positions[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
            last = x[torch.arange(B, device=x.device), lengths + T]   # past the end, always
            return (x * mask).sum(1) / lengths[:, None].to(x.dtype) + 0 * last.sum().item()
    """))
    g = runner.grade(EX, f)
    assert not g.passed and {r.leg for r in g.failures} >= {"cpu", "sim:0", "sim:1"}
    on_sim = "\n".join(r.message for r in g.failures if r.leg.startswith("sim"))
    assert "AcceleratorError" in on_sim and "device-side assert triggered" in on_sim
    assert "A device-side assert: a kernel on the device found a value out of range" in on_sim
    on_cpu = "\n".join(r.message for r in g.failures if r.leg == "cpu")
    assert "IndexError" in on_cpu and "is out of bounds" in on_cpu
