"""The simulator's placement rules where PyTorch itself can be asked: the survivors of a sampled mutation run of
grader/simulated/placement.py (issue 31, round 4; benchmarks/results/mutation.md)."""

from __future__ import annotations

import itertools

import pytest
import torch

from grader.simulated.placement import _CPU_KERNEL_CHECKS, _cpu_conv_backend


def _configurations():
    for dim, dtype, batch, size, kernel, stride, dilation, groups, transposed in itertools.product(
            (1, 2, 3), (torch.float32, torch.float64), (1, 2, 16), (6, 150), ((1, 1), (3, 3), (5, 5), (1, 5), (5, 1)),
            (1, 2), (1, 2), (1, 3), (False, True)):
        if dim != 2 and kernel[0] != kernel[1] or dim == 3 and size > 6:
            continue
        spatial = (size,) * dim
        ks = kernel[1:] if dim == 1 else kernel if dim == 2 else kernel[:1] * 3
        x = torch.randn(batch, 3, *spatial, dtype=dtype)
        w = torch.randn(3, 3 // groups, *ks, dtype=dtype)
        yield x, w, [stride] * dim, [dilation] * dim, transposed, groups


@pytest.mark.parametrize("threads", (1, 2))
def test_every_cpu_kernel_torch_picks_for_a_cpu_input_refuses_a_device_weight_in_cudas_words(threads):
    # With a CPU input and a device weight, PyTorch runs the CPU kernel it selects by the input, and that
    # kernel's check is the error the learner sees: each kernel torch can pick has words recorded on CUDA
    # (placement._CPU_KERNEL_CHECKS, the fidelity cases "...: a cpu input, the weight on the device"), or is
    # mkldnn's, which compares types (fidelity: "conv_transpose2d, float32, a batch of 16: ...")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    picked = set()
    try:
        for x, w, stride, dilation, transposed, groups in _configurations():
            zeros = [0] * len(stride)
            args = (x, w, None, stride, zeros, dilation, transposed, zeros, groups)
            picked.add(_cpu_conv_backend(x, w, args))
    finally:
        torch.set_num_threads(before)
    assert picked - {"Empty"} <= set(_CPU_KERNEL_CHECKS) | {"Mkldnn", "MkldnnTranspose"}, picked
    assert {"Mkldnn", "Slow2d", "SlowDilated2d", "SlowTranspose2d", "Slow3d"} <= picked, picked


@pytest.mark.parametrize("fn, dim, dilation, words", [
    (torch.nn.functional.conv2d, 2, 2, "wrapper_SIM__slow_conv_dilated2d"),
    (torch.nn.functional.conv3d, 3, 2, "wrapper_SIM__slow_conv_dilated3d"),
    (torch.nn.functional.conv3d, 3, 1, "Could not run 'aten::slow_conv3d_forward'"),
    (torch.nn.functional.conv_transpose3d, 3, 1, "wrapper_SIM__slow_conv_transpose3d"),
])
def test_a_float64_cpu_input_meets_the_kernel_torch_picks(fn, dim, dilation, words):
    x = torch.randn(1, 2, *(7,) * dim, dtype=torch.float64)
    w = torch.randn(2, 2, *(3,) * dim, dtype=torch.float64, device="sim")
    _raises(lambda: fn(x, w, dilation=dilation), words)


S0, S1 = "sim:0", "sim:1"


def _raises(call, *words):
    with pytest.raises((RuntimeError, NotImplementedError)) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)


def test_a_convolution_checks_its_bias_against_the_inputs_device():
    x, w = torch.randn(1, 3, 8, 8, device=S0), torch.randn(4, 3, 3, 3, device=S0)
    assert torch.nn.functional.conv2d(x, w).shape == (1, 4, 6, 6)  # no bias: nothing more to check
    _raises(lambda: torch.nn.functional.conv2d(x, w, torch.randn(4, device=S1)),
            "found at least two devices, sim:0 and sim:1")


def test_a_convolution_checks_shapes_before_devices():
    # convolution's shape checks come before any device check: a 2-D weight on the other GPU is a shape error
    x = torch.randn(1, 3, 8, device=S0)
    _raises(lambda: torch.nn.functional.conv1d(x, torch.randn(4, 3, device=S1)),
            "weight should have at least three dimensions")


def test_index_put_takes_cpu_indices_and_a_0_dim_cpu_value_but_no_other_cpu_values():
    x = torch.zeros(4, device=S0)
    x[torch.tensor([0, 2])] = torch.ones(2, device=S0)  # indices move to x's device
    x[torch.tensor([1], device=S0)] = torch.tensor(5.0)  # a 0-dim value is read on the host
    assert x.cpu().tolist() == [1.0, 5.0, 1.0, 0.0]

    def cpu_values():
        x[torch.tensor([0, 2], device=S0)] = torch.ones(2)
    _raises(cpu_values, "found at least two devices, sim:0 and cpu")


@pytest.mark.parametrize("which", ("weight", "bias"))
def test_layer_norm_takes_a_weight_and_a_bias_of_the_inputs_dtype_only(which):
    x = torch.randn(2, 4, device=S0)
    params = {"weight": torch.ones(4, device=S0), "bias": torch.zeros(4, device=S0)}
    params[which] = params[which].half()
    _raises(lambda: torch.nn.functional.layer_norm(x, (4,), **params), "expected scalar type Float but found Half")


def test_a_uint8_convolution_reaches_cudnn_only_with_uint8_weights():
    x = torch.zeros(1, 3, 8, 8, device=S0, dtype=torch.uint8)
    _raises(lambda: torch.nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device=S0)),
            "expected scalar type Byte but found Float")
    _raises(lambda: torch.nn.functional.conv2d(x, torch.zeros(4, 3, 3, 3, device=S0, dtype=torch.uint8)),
            "GET was unable to find an engine")


def test_bmm_dispatches_on_its_first_batch_dtype():
    # CUDA's kernel dispatches on self's dtype (no integer kernel), then reads the second batch as that type
    ints, floats = torch.ones(1, 2, 2, dtype=torch.long, device=S0), torch.ones(1, 2, 2, device=S0)
    _raises(lambda: torch.bmm(ints, floats), "\"baddbmm_sim\" not implemented for 'Long'")
    _raises(lambda: torch.bmm(floats, ints), "expected scalar type Float but found Long")

