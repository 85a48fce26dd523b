"""Copies that change the dtype as CUDA makes them, pinned memory from factories, and printing as a host read
(issue 27, point 2).

CUDA's copy (copy_kernel_cuda) converts on the device when non_blocking=True: the source dtype crosses into a
device temporary of that dtype, converted after the copy (on an H100: 96 MiB of device memory at the peak for
64 MiB of float32 sent as float16, 32 MiB blocking). A blocking copy converts on the CPU and the converted bytes
cross. Back to the host it is the other way round. `torch.empty(..., pin_memory=True)` and the other factories
that take pin_memory give pinned CPU tensors, as on CUDA."""
import subprocess
import sys
import textwrap

import pytest
import torch

import grader.simulated as gs
from grader import ROOT
from grader.simulated import config

MiB = 2**20


def _peak_of(make):
    torch.sim.synchronize()
    base = torch.sim.memory_allocated(0)
    torch.sim.reset_peak_memory_stats(0)
    out = make()
    torch.sim.synchronize()
    return (torch.sim.max_memory_allocated(0) - base) / MiB, out


@pytest.mark.parametrize("non_blocking, crossed, peak", [(False, 8 * MiB, 8), (True, 16 * MiB, 24)])
def test_a_combined_to_sends_the_source_dtype_only_with_non_blocking(non_blocking, crossed, peak):
    x = torch.randn(1024, 1024, 4)  # 16 MiB of float32
    with gs.record() as rec:
        got, y = _peak_of(lambda: x.to("sim:0", torch.float16, non_blocking=non_blocking))
    assert [c.nbytes for c in rec.h2d] == [crossed]
    assert got == peak  # the float16 result, and with non_blocking the float32 temporary beside it
    assert y.dtype is torch.float16 and torch.equal(y.cpu(), x.half())


def test_a_non_blocking_conversion_from_pinned_memory_is_queued_and_lands():
    x = torch.linspace(-3, 3, 1000).pin_memory()
    with gs.record() as rec:
        y = x.to("sim:0", torch.float16, non_blocking=True)
        assert rec.n_syncs == 0 and rec.h2d[0].pinned and rec.h2d[0].non_blocking
        assert rec.h2d[0].nbytes == 4000
    assert torch.equal((y * 2).cpu(), (x * 2).half())


def test_copy_into_a_tensor_of_another_dtype_converts_where_cuda_does():
    src = torch.arange(10.0, dtype=torch.float64)
    for non_blocking, crossed in ((False, 40), (True, 80)):
        dst = torch.empty(10, dtype=torch.float32, device="sim:0")
        with gs.record() as rec:
            dst.copy_(src, non_blocking=non_blocking)
        assert [c.nbytes for c in rec.h2d] == [crossed], non_blocking
        assert torch.equal(dst.cpu(), src.float())


@pytest.mark.parametrize("non_blocking, crossed", [(False, 40), (True, 80)])
def test_back_to_the_host_the_device_converts_only_with_non_blocking(non_blocking, crossed):
    x = torch.arange(10.0, device="sim:0")
    with gs.record() as rec:
        y = x.to("cpu", torch.float64, non_blocking=non_blocking)
        torch.sim.synchronize()
    assert [c.nbytes for c in rec.d2h] == [crossed]
    assert y.dtype is torch.float64 and torch.equal(y, torch.arange(10.0, dtype=torch.float64))


def test_a_same_dtype_copy_is_unchanged():
    x = torch.ones(256)
    with gs.record() as rec:
        _, y = _peak_of(lambda: x.to("sim:0", non_blocking=True))
    assert [c.nbytes for c in rec.h2d] == [1024] and torch.equal(y.cpu(), x)


def test_mps_converts_on_the_cpu_either_way():
    # copy_to_mps_ converts before the blit, non_blocking or not: the destination dtype crosses
    code = textwrap.dedent("""
        import torch, grader.simulated as gs
        gs.install(count=1, profile="mps")
        x = torch.ones(128)
        with gs.record() as rec:
            y = x.to("sim:0", torch.float16, non_blocking=True)
        print([c.nbytes for c in rec.h2d], y.dtype)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[256]", "torch.float16"]


FACTORIES = {
    "empty": lambda: torch.empty(3, pin_memory=True),
    "zeros": lambda: torch.zeros(2, 2, pin_memory=True),
    "ones": lambda: torch.ones(3, pin_memory=True),
    "full": lambda: torch.full((2,), 7.0, pin_memory=True),
    "empty_like": lambda: torch.empty_like(torch.ones(2), pin_memory=True),
    "empty_strided": lambda: torch.empty_strided((2, 2), (2, 1), pin_memory=True),
    "arange": lambda: torch.arange(3, pin_memory=True),
    "randn": lambda: torch.randn(3, pin_memory=True),
    "tensor": lambda: torch.tensor([1.0, 2.0], pin_memory=True),
    "new_zeros": lambda: torch.ones(2).new_zeros(3, pin_memory=True),
    "pin_memory()": lambda: torch.ones(3).pin_memory(),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_asked_for_pinned_memory_give_pinned_cpu_tensors(name):
    # "implement getPinnedMemoryAllocator" was raised for every one but pin_memory(): a right per_class_accuracy
    # with a pinned torch.empty buffer failed on every machine without a GPU
    t = FACTORIES[name]()
    assert t.device.type == "cpu" and t.is_pinned()
    assert not torch.empty(3).is_pinned() and not torch.empty(3, pin_memory=False).is_pinned()


def test_a_pinned_empty_buffer_takes_a_non_blocking_copy_back():
    x = torch.arange(6.0, device="sim:0") * 3
    host = torch.empty(6, pin_memory=True)
    with gs.record() as rec:
        host.copy_(x, non_blocking=True)
        assert rec.n_syncs == 0 and rec.d2h[0].pinned and rec.d2h[0].non_blocking
        assert torch.isnan(host).all()  # not landed yet
        torch.accelerator.synchronize("sim:0")
    assert host.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]


def test_pinned_memory_for_a_device_tensor_is_refused_as_on_cuda():
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        torch.empty(2, device="sim:0", pin_memory=True)
    assert config.DEVICE_TYPE == "sim"


def test_printing_a_device_tensor_is_recorded_as_a_host_read():
    x = torch.arange(4.0, device="sim:1")
    with gs.record() as rec:
        print(x)
        str([x, x])
    assert [(r.reason, r.device) for r in rec.host_reads] == [("print", "sim:1")] * 3


def test_torchscript_compiles_the_factories_the_simulator_wraps():
    # TorchScript knows torch.zeros, torch.tensor... by identity: the wrappers (pin_memory, the current device)
    # must compile as the aten ops they stand for
    @torch.jit.script
    def made(x):
        return x + torch.zeros(3) + torch.ones(3) + torch.tensor([1.0, 2.0, 3.0]) + torch.as_tensor(x)

    assert made(torch.ones(3)).tolist() == [4.0, 5.0, 6.0]
