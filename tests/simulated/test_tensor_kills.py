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


def test_numpy_takes_force_by_keyword_only():
    t = torch.ones(2, device=DEV)
    with pytest.raises(TypeError):
        t.numpy(True)  # Tensor.numpy(*, force=False)
    assert t.numpy(force=True).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dtype, unlanded", [(torch.uint8, 255), (torch.int32, -2**31), (torch.int64, -2**63)],
                         ids=str)
def test_a_pinned_integer_buffer_holds_a_value_no_result_has_until_its_copy_lands(dtype, unlanded):
    src = torch.zeros(4, dtype=dtype, device=DEV)
    dst = torch.empty(4, dtype=dtype).pin_memory()
    dst.copy_(src, non_blocking=True)
    assert dst.tolist() == [unlanded] * 4  # the type's far end: read before the copy lands, it is seen as wrong
    torch.accelerator.synchronize()
    assert dst.tolist() == [0] * 4


def test_a_device_without_an_index_is_the_current_one():
    before = torch.accelerator.current_device_index()
    torch.accelerator.set_device_index(1)
    try:
        assert torch.ones(2).to("sim").device == torch.device("sim:1")
        assert torch.ones(2, device="sim:0").to("sim").device == torch.device("sim:1")
    finally:
        torch.accelerator.set_device_index(before)


def test_a_packed_sequence_of_device_data_with_cpu_lengths_pads_back():
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    x = torch.arange(12.0).reshape(3, 4, 1)
    packed = pack_padded_sequence(x.to(DEV), torch.tensor([4, 2, 1]), batch_first=True)
    assert packed.data.device == torch.device(DEV) and packed.batch_sizes.device.type == "cpu"
    padded, lengths = pad_packed_sequence(packed, batch_first=True)
    assert padded.device == torch.device(DEV) and lengths.tolist() == [4, 2, 1]
    assert padded.squeeze(-1).cpu().tolist() == [[0, 1, 2, 3], [4, 5, 0, 0], [8, 0, 0, 0]]


def test_resize_keeps_a_storage_that_is_big_enough_and_replaces_one_that_is_not():
    x = torch.empty(1024, device=DEV)
    before, allocations = mod.memory_allocated(0), mod.memory_stats(0)["allocation.all.allocated"]
    x.resize_(512)
    assert mod.memory_allocated(0) == before  # shrinking keeps the storage, as CUDA's resize_ does
    assert mod.memory_stats(0)["allocation.all.allocated"] == allocations  # and allocates nothing
    x.resize_(2048)
    assert mod.memory_allocated(0) == before - 4096 + 8192  # a storage of the new size; the old one freed


def test_views_made_in_inference_mode_of_a_normal_tensor_stay_on_its_device():
    w = torch.arange(4.0, device=DEV)
    with torch.inference_mode():
        parts = w.split(2)
    assert [p.device for p in parts] == [torch.device(DEV)] * 2
    assert [p.cpu().tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0]]


def test_a_copy_between_devices_is_one_device_to_device_copy(rec):
    a = torch.randn(3, device=DEV)
    other, same = torch.empty(3, device="sim:1"), torch.empty(3, device=DEV)
    other.copy_(a)
    assert len(rec.d2d) == 1
    same.copy_(a)
    assert len(rec.d2d) == 1  # within one device: a kernel, not a copy between devices
    assert torch.equal(other.cpu(), a.cpu()) and torch.equal(same.cpu(), a.cpu())
