"""What CUDA checks that the simulator must check itself: gradients on the wrong device (the autograd engine skips
its check for tensor subclasses), generators of the device given to CPU random ops, and device-side asserts.
Each rule was recorded on real GPUs (tests/simulated/fidelity.py); these tests pin the details around it."""

import subprocess
import sys

import pytest
import torch

from grader import ROOT
from grader.simulated import asserts



def test_a_0_dim_cpu_gradient_is_moved_and_a_larger_one_refused():
    x = torch.ones(3, device="sim", requires_grad=True)
    (x * 2).sum().backward(torch.tensor(1.0))  # as the engine moves a 0-dim gradient
    assert x.grad.device == torch.device("sim:0")
    y = torch.ones(3, device="sim:1", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 1 - expected device sim:1 but got cpu"):
        torch.autograd.grad([x * 2, y * 2], [x, y], grad_outputs=[torch.ones(3, device="sim"), torch.ones(3)])


def test_a_custom_function_with_non_tensor_inputs_is_checked_at_its_tensor_inputs():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, factor, x):
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return None, g.cpu() * 2

    x = torch.ones(3, device="sim", requires_grad=True)
    with pytest.raises(RuntimeError, match="Function ScaleBackward returned an invalid gradient at index 0 - "
                                           "expected device sim:0 but got cpu"):
        Scale.apply(2.0, x).sum().backward()


def test_cpu_random_ops_refuse_a_device_generator_and_device_ones_take_it():
    g = torch.Generator(device="sim")
    for call in (lambda: torch.randperm(4, generator=g), lambda: torch.rand(2, generator=g),
                 lambda: torch.zeros(3).uniform_(generator=g), lambda: torch.multinomial(torch.ones(3), 1, generator=g),
                 lambda: list(torch.utils.data.DataLoader(range(4), shuffle=True, generator=g))):
        with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'sim'"):
            call()
    assert torch.randperm(4, generator=g, device="sim").device.type == "sim"
    with torch.device("sim"):
        assert torch.rand(2, generator=g).device.type == "sim"
    assert torch.randperm(4, generator=torch.Generator()).device.type == "cpu"


ASSERT_THEN = """
import json, sys, torch
sys.path.insert(0, {root!r})
import grader.simulated as gs
gs.install(count=2)
seen = []
def step(name, fn):
    try:
        fn()
        seen.append([name, "ok"])
    except Exception as e:
        seen.append([name, type(e).__name__])
w = torch.zeros(3, device="sim:0")
step("out of range", lambda: w.index_put_((torch.tensor([5], device="sim:0"),), torch.ones(1, device="sim:0")))
step("other device", lambda: (torch.ones(2, device="sim:1") + 1).sum().item())
step("wait", lambda: torch.sim.synchronize())
step("same device", lambda: torch.ones(2, device="sim:0") + 1)
step("cpu", lambda: torch.ones(2) + 1)
print(json.dumps(seen))
"""


def test_an_assert_breaks_its_device_for_good_and_leaves_the_others_and_the_cpu():
    # In a process of its own: a broken device stays broken.
    out = subprocess.run([sys.executable, "-c", ASSERT_THEN.format(root=str(ROOT))], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip().splitlines()[-1] == (
        '[["out of range", "ok"], ["other device", "ok"], ["wait", "AcceleratorError"], '
        '["same device", "AcceleratorError"], ["cpu", "ok"]]'), out.stderr
    assert "sim:0: device-side assertion failed in index_put_" in out.stderr


def test_only_data_checks_count_as_kernel_asserts():
    assert asserts.is_kernel_assert(IndexError("Target 5 is out of bounds."))
    assert asserts.is_kernel_assert(RuntimeError("index 3 is out of bounds for dimension 1 with size 3"))
    assert not asserts.is_kernel_assert(RuntimeError("Expected all tensors to be on the same device, but ..."))
    assert not asserts.is_kernel_assert(IndexError("too many indices for tensor of dimension 1"))
    for text in ("out of range: tried to access index 9 on a tensor of 4 elements.",
                 "Index 1 of input takes value 9 which is not in the valid range [0, 4)",
                 "all elements of input should be between 0 and 1",
                 "invalid multinomial distribution (sum of probabilities <= 0)"):
        assert asserts.is_kernel_assert(RuntimeError(text)), text
    assert not asserts.is_kernel_assert(RuntimeError("bincount only supports 1-d non-negative integral inputs."))


def test_binary_cross_entropy_and_multinomial_report_their_assert_at_once_as_cuda_did():
    """The other kernel asserts surface at the next wait (fidelity cases "... when and how it fails")."""
    assert asserts.REPORTED_BY_THE_OPERATION.match("all elements of input should be between 0 and 1")
    assert asserts.REPORTED_BY_THE_OPERATION.match("probability tensor contains either `inf`, `nan` or element < 0")
    assert not asserts.REPORTED_BY_THE_OPERATION.match("Target 5 is out of bounds.")


def test_the_default_device_of_the_type_follows_the_current_device():
    # Recorded on CUDA for set_default_device("cuda") with set_device(1); `with torch.device(...)` fills in
    # the device the same way.
    torch.sim.set_device(1)
    try:
        with torch.device("sim"):
            assert torch.tensor([1.0]).device == torch.as_tensor([1.0]).device == torch.device("sim:1")
        torch.set_default_device("sim")
        try:
            assert torch.tensor([1.0]).device == torch.device("sim:1")
        finally:
            torch.set_default_device(None)
    finally:
        torch.sim.set_device(0)
    assert torch.tensor([1.0]).device.type == "cpu"
