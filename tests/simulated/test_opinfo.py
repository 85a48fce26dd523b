"""Every operator PyTorch tests itself with (its OpInfo database), on the simulated device: each sample input
that runs on the CPU must run on `sim` too, forward in five dtypes and backward in float32, and give a result of
the CPU's shape and dtype on the device. The exceptions are CUDA's own refusals, each recorded on real GPUs.
This sweep found a conjugate view the simulator did not mark as one (a process abort in a backward) and a
missing kernel for autograd's zero gradients (tests/simulated/test_lazy_tensors.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("expecttest")  # PyTorch's OpInfo database imports it (a dev requirement)
SWEEP = Path(__file__).with_name("opinfo_sweep.py")


@pytest.mark.exhaustive
@pytest.mark.parametrize("args", [["float32", "backward"], ["float32"], ["float16"], ["int64"], ["bool"],
                                  ["complex64"]], ids=" ".join)
def test_every_sample_that_runs_on_the_cpu_runs_on_the_device(args):
    done = subprocess.run([sys.executable, str(SWEEP), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]  # a crash of the simulator (an abort) ends up here
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ran"] > 500 and not result["failures"], result
