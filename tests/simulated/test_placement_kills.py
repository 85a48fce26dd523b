"""The simulator's placement rules where PyTorch itself can be asked: the survivors of a sampled mutation run of
grader/simulated/placement.py (issue 31, round 4; benchmarks/results/mutation.md)."""

from __future__ import annotations

import itertools

import pytest
import torch

from grader.simulated.placement import _cpu_conv_backend

#: torch's names of the CPU kernels whose device check the simulator words (placement.conv_check)
KERNELS = {"Mkldnn": "mkldnn", "Slow2d": "slow2d", "SlowTranspose2d": "slow_transpose2d"}


def _configurations():
    for dim, dtype, batch, size, kernel, stride, dilation, groups, transposed in itertools.product(
            (1, 2), (torch.float32, torch.float64), (1, 2, 16), (6, 150), ((1, 1), (3, 3), (5, 5), (1, 5), (5, 1)),
            (1, 2), (1, 2), (1, 3), (False, True)):
        if dim == 1 and kernel[0] != 1:
            continue
        spatial = (size,) * dim
        ks = kernel[1:] if dim == 1 else kernel
        x = torch.randn(batch, 3, *spatial, dtype=dtype)
        w = torch.randn(3, 3 // groups, *ks, dtype=dtype)
        yield x, w, [stride] * dim, [dilation] * dim, transposed, groups


@pytest.mark.parametrize("threads", (1, 2))
def test_the_cpu_kernel_of_a_convolution_is_the_one_torch_selects(threads):
    # With a CPU input and a device weight, PyTorch runs the CPU kernel it selects by the input, and that
    # kernel's check is the error the learner sees: the simulator's choice must be torch's own
    # (at::native::select_conv_backend, asked here through torch._C._select_conv_backend).
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    compared = 0
    try:
        for x, w, stride, dilation, transposed, groups in _configurations():
            zeros = [0] * len(stride)
            try:
                chosen = torch._C._select_conv_backend(x, w, None, stride, zeros, dilation, transposed, zeros,
                                                       groups, None)
            except RuntimeError:  # a kernel larger than its (dilated) input: no kernel at all
                continue
            name = str(chosen).rsplit(".", 1)[-1]
            if name not in KERNELS:  # SlowDilated2d and the rest: not a kernel the simulator words
                continue
            args = (x, w, None, stride, zeros, dilation, transposed, zeros, groups)
            assert _cpu_conv_backend(x, w, args) == KERNELS[name], (tuple(x.shape), tuple(w.shape), stride,
                                                                   dilation, transposed, groups, threads)
            compared += 1
    finally:
        torch.set_num_threads(before)
    assert compared > 300
