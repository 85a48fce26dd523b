"""What CUDA does that the simulator's tensor subclass must do too, pinned where the behavioural tests left it
free: the survivors of a sampled mutation run of grader/simulated/tensor.py (issue 31, round 4;
benchmarks/results/mutation.md). Each test compares with the CPU's answer or CUDA's documented one."""

from __future__ import annotations

import pytest
import torch

DEV = "sim:0"
mod = torch.get_device_module("sim")

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_factory_allocates_its_bytes_on_the_device(dtype):
    # 1024 elements of any dtype make a multiple of CUDA's 512-byte rounding: the allocation is exactly the bytes
    before = mod.memory_allocated(0)
    t = torch.empty(1024, dtype=dtype, device=DEV)
    assert mod.memory_allocated(0) - before == 1024 * t.element_size()
    del t
    assert mod.memory_allocated(0) == before


def test_a_device_tensor_prints_as_the_cpus_with_its_device():
    x = torch.arange(4.0).reshape(2, 2)
    assert repr(x.to(DEV)) == "tensor([[0., 1.],\n        [2., 3.]], device='sim:0')"
    assert repr(x.to(DEV)).replace(", device='sim:0'", "") == repr(x)


def test_a_device_parameter_prints_as_cuda_prints_one():
    x = torch.arange(4.0).reshape(2, 2)
    shown = repr(torch.nn.Parameter(x.to(DEV)))
    assert shown == "Parameter containing:\ntensor([[0., 1.],\n        [2., 3.]], device='sim:0', requires_grad=True)"
    assert shown.replace(", device='sim:0'", "") == repr(torch.nn.Parameter(x))


def test_an_empty_tensor_keeps_the_memory_format_asked_for():
    e = torch.empty(1, 3, 4, 4, memory_format=torch.channels_last, device=DEV)
    assert e.is_contiguous(memory_format=torch.channels_last)
    assert e.stride() == torch.empty(1, 3, 4, 4, memory_format=torch.channels_last).stride()


def test_a_conversion_keeps_the_strides_of_a_dense_transposed_tensor():
    # to() with the default preserve_format keeps a non-overlapping, dense layout as it is, on CUDA as on the CPU
    x = torch.randn(3, 2, device=DEV).t()
    assert not x.is_contiguous()
    assert x.to(torch.float64).stride() == x.cpu().to(torch.float64).stride() == (1, 2)


def test_a_transposed_pinned_buffer_is_copied_from_directly_when_the_layouts_match(rec):
    # copy_kernel_cuda copies straight from pinned memory when source and destination are the same dense layout,
    # transposed or not (TensorIterator sees one block on both sides): asynchronous, no staging, no wait
    src = torch.randn(3, 2).pin_memory().t()
    dst = torch.empty(3, 2, device=DEV).t()
    assert not src.is_contiguous() and src.stride() == dst.stride()
    dst.copy_(src, non_blocking=True)
    assert rec.n_syncs == 0 and rec.h2d[0].pinned and rec.h2d[0].non_blocking
    torch.accelerator.synchronize()
    assert torch.equal(dst.cpu(), src)
