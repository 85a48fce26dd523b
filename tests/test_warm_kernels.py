"""Kernels forked from a warm template (grader.classroom.warm_kernels), as `devcourse classroom autograde`
starts them: they run where and with what they are told, answer interrupts and shutdowns, and leave nothing
behind. The gradebook they lead to is compared with stock autograde's in test_classroom."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.classroom import warm_kernels

PROBE = Path(__file__).with_name("warm_kernel_probe.py")

pytestmark = pytest.mark.skipif(not warm_kernels.available(), reason="needs Linux and the installed entry point")


def test_a_warm_kernel_behaves_as_a_started_one(tmp_path):
    done = subprocess.run([sys.executable, str(PROBE), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["selected"] and found["provisioner"] == "WarmKernelProvisioner"
    # A fork of the template (the forkserver), not a child of the process that asked for it.
    assert found["kernel_parent"] != found["me"]
    assert (found["cwd"], found["env"], found["own_group"]) == (str(tmp_path), "seen", True)
    assert found["argv0"] == "ipykernel_launcher.py"  # as `python -m ipykernel_launcher` leaves it
    assert found["interrupted"][0] == "KeyboardInterrupt" and found["interrupted"][1] < 10
    assert found["alive_after_shutdown"] is False
    assert found["killed_gone"] and found["orphan_gone"]


def test_other_kernel_commands_start_the_usual_way():
    assert warm_kernels._is_ipykernel([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"])
    assert not warm_kernels._is_ipykernel(["/opt/other/python", "-m", "ipykernel_launcher", "-f", "c.json"])
    assert not warm_kernels._is_ipykernel(["R", "--slave", "-e", "IRkernel::main()", "--args", "c.json"])
