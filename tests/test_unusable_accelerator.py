"""An accelerator that is built but has no usable device (a CUDA wheel on a laptop), which only the simulator can
be inside a process: grader.simulated.unusable(). pick_device's grader checks the fallback to the CPU there, on
the simulated legs, which every machine runs."""

import subprocess
import sys
import textwrap

from grader import ROOT
from grader.engine import runner
from grader.catalog import course

PICK = course.get("pick_device")


def test_inside_unusable_the_accelerator_is_named_but_not_usable():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import torch
        from grader import simulated
        simulated.install()
        with simulated.unusable():
            print(torch.accelerator.is_available(), torch.accelerator.device_count(),
                  torch.accelerator.current_accelerator(), torch.accelerator.current_accelerator(True))
            try:
                torch.ones(2).to("sim")
            except RuntimeError as exc:
                print(exc)
        print(torch.accelerator.is_available(), torch.ones(2, device="sim").device)
    """)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["False 0 sim None", "No SIM GPUs are available", "True sim:0"], done.stderr


def test_returning_the_accelerator_unchecked_fails_on_the_simulated_legs(tmp_path):
    # Right on a machine with a usable GPU, so no real leg of a GPU machine fails it: before this check it passed
    # there and failed on a laptop (tests/held/pick_device/ until pick_device's GPU rows are recorded again).
    f = tmp_path / "unchecked.py"
    f.write_text(textwrap.dedent("""
        import torch
        from torch import nn

        def pick_device() -> torch.device:
            return torch.accelerator.current_accelerator()

        def build_model(in_features: int, classes: int) -> nn.Module:
            return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(pick_device())
    """))
    grade = runner.grade(PICK, f, device="sim")
    assert not grade.passed
    assert {r.leg for r in grade.failures} == {"sim:0", "sim:1"}
    assert all("where the accelerator has no usable device" in r.message and "No SIM GPUs are available" in r.message
               for r in grade.failures), [r.message for r in grade.failures]
    assert runner.grade(PICK, PICK.solution_file, device="sim").passed
