"""Issue 11, item 6: CUDA's caching allocator, exactly (rounding, pools, segments, splitting, merging,
empty_cache, out-of-memory), and the numbers the book recorded on an H200."""
import gc
import os
import subprocess
import textwrap
import sys

import pytest
import torch

import grader.simulated as gs
from grader.simulated.allocator import GiB, MiB, CachingAllocator, allocation_size, format_size, round_size

ROOT = __file__.rsplit("/tests/", 1)[0]


@pytest.mark.parametrize("n,size", [(0, 0), (1, 512), (511, 512), (512, 512), (513, 1024), (1100, 1536),
                                    (4000, 4096), (1 << 20, 1 << 20), ((1 << 20) + 1, (1 << 20) + 512)])
def test_round_size(n, size):
    assert round_size(n) == size


@pytest.mark.parametrize("size,seg", [(512, 2 * MiB), (MiB, 2 * MiB), (MiB + 512, 20 * MiB),
                                      (10 * MiB - 512, 20 * MiB), (10 * MiB, 10 * MiB),
                                      (10 * MiB + 512, 12 * MiB), (256 * MiB, 256 * MiB)])
def test_allocation_size(size, seg):
    assert allocation_size(size) == seg


def test_small_pool_splits_a_2mib_segment_and_merges_back():
    a = CachingAllocator(capacity=GiB)
    b1 = a.alloc(1100)
    assert (a.allocated, a.reserved) == (1536, 2 * MiB)
    b2 = a.alloc(100)
    assert (a.allocated, a.reserved) == (2048, 2 * MiB)  # same segment, split
    assert a.blocks() == [(2 * MiB, [(1536, True), (512, True), (2 * MiB - 2048, False)])]
    a.release(b1)
    assert a.blocks() == [(2 * MiB, [(1536, False), (512, True), (2 * MiB - 2048, False)])]
    b3 = a.alloc(1000)  # best fit: the 1536-byte hole, split into 1024 + 512
    assert a.blocks()[0][1][:3] == [(1024, True), (512, False), (512, True)]
    a.release(b2)
    a.release(b3)
    assert a.blocks() == [(2 * MiB, [(2 * MiB, False)])] and a.allocated == 0
    a.empty_cache()
    assert a.reserved == 0 and a.blocks() == []


def test_large_pool_buffers_and_rounding():
    a = CachingAllocator(capacity=GiB)
    b = a.alloc(3 * MiB)  # 1..10 MiB: a 20 MiB buffer, split (rest > 1 MiB)
    assert a.reserved == 20 * MiB and a.blocks()[0][1] == [(3 * MiB, True), (17 * MiB, False)]
    c = a.alloc(16 * MiB + 1)  # best fit: the free 17 MiB block (rest under 1 MiB: not split)
    assert a.reserved == 20 * MiB
    a.release(c)
    d = a.alloc(24 * MiB + 1)  # >= 10 MiB: its own segment rounded to 2 MiB
    assert a.reserved == 46 * MiB
    a.release(b)
    a.release(d)
    a.empty_cache()
    assert a.reserved == 0


def test_large_block_not_split_when_rest_is_at_most_1mib():
    a = CachingAllocator(capacity=GiB)
    b = a.alloc(12 * MiB)
    a.release(b)
    c = a.alloc(11 * MiB + 512)  # rest 512 KiB: the whole 12 MiB block is used
    assert a.blocks() == [(12 * MiB, [(12 * MiB, True)])] and a.allocated == 12 * MiB


def test_empty_cache_keeps_partly_used_segments():
    a = CachingAllocator(capacity=GiB)
    keep = a.alloc(512)
    tmp = a.alloc(4096)
    a.release(tmp)
    a.empty_cache()
    assert a.reserved == 2 * MiB  # one live block pins its segment
    a.release(keep)
    a.empty_cache()
    assert a.reserved == 0


def test_oom_frees_the_cache_and_retries_then_raises():
    a = CachingAllocator(0, capacity=100 * MiB)
    x = a.alloc(60 * MiB)
    a.release(x)  # 60 MiB cached
    y = a.alloc(80 * MiB)  # does not fit next to the cache: cache released, retry succeeds
    assert a.num_alloc_retries == 1 and a.reserved == 80 * MiB
    with pytest.raises(torch.OutOfMemoryError) as e:
        a.alloc(40 * MiB)
    assert a.num_ooms == 1 and a.reserved == 80 * MiB
    assert str(e.value) == (
        "SIM out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which "
        "20.00 MiB is free. Including non-PyTorch memory, this process has 80.00 MiB memory in use. Of the "
        "allocated memory 80.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. "
        "If reserved but unallocated memory is large try setting PYTORCH_SIM_ALLOC_CONF=expandable_segments:True "
        "to avoid fragmentation.  See documentation for Memory Management  "
        "(https://docs.pytorch.org/docs/stable/notes/sim.html#optimizing-memory-usage-with-pytorch-sim-alloc-conf)"
    )
    assert isinstance(e.value, RuntimeError)
    a.release(y)


def test_fragmentation_shows_in_the_oom_message():
    a = CachingAllocator(0, capacity=100 * MiB)
    pairs = [(a.alloc(9 * MiB), a.alloc(9 * MiB)) for _ in range(5)]  # two per 20 MiB buffer
    assert a.reserved == 100 * MiB and len(a.segments) == 5
    for first, _ in pairs:
        a.release(first)  # 55 MiB reserved but free, in pieces of 9 and 2 MiB
    with pytest.raises(torch.OutOfMemoryError) as e:
        a.alloc(30 * MiB)
    assert "Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 0 bytes is free." in str(e.value)
    assert "45.00 MiB is allocated by PyTorch, and 55.00 MiB is reserved by PyTorch but unallocated" in str(e.value)
    assert a.num_alloc_retries == 1  # the cache was freed (nothing entirely free) and the request retried


def test_format_size_like_cuda():
    assert [format_size(n) for n in (512, 1024, 1025, MiB, MiB + 1, GiB, 2 * GiB)] == [
        "512 bytes", "1024 bytes", "1.00 KiB", "1024.00 KiB", "1.00 MiB", "1024.00 MiB", "2.00 GiB"]


def test_device_memory_counts_storages_once_and_follows_the_rules():
    gc.collect()
    torch.sim.empty_cache()
    base = torch.sim.memory_allocated()
    x = torch.empty(1100, dtype=torch.uint8, device="sim")
    assert torch.sim.memory_allocated() - base == 1536
    v = x.view(11, 100)
    del x
    gc.collect()
    assert torch.sim.memory_allocated() - base == 1536  # the view keeps the block
    del v
    gc.collect()
    assert torch.sim.memory_allocated() == base
    torch.sim.empty_cache()
    r0 = torch.sim.memory_reserved()
    big = torch.empty(24 * MiB + 1, dtype=torch.uint8, device="sim")
    assert torch.sim.memory_reserved() - r0 == 26 * MiB
    del big
    gc.collect()
    assert torch.sim.memory_reserved() - r0 == 26 * MiB  # cached
    torch.sim.empty_cache()
    assert torch.sim.memory_reserved() == r0
    s = torch.sim.memory_stats()
    assert s["allocated_bytes.all.current"] == torch.sim.memory_allocated()
    assert s["reserved_bytes.large_pool.current"] + s["reserved_bytes.small_pool.current"] == r0


def test_a_deep_copy_owns_its_memory():
    # copy.deepcopy(model) (keeping the best weights) must neither share nor free twice the original's blocks
    import copy

    gc.collect()
    base = torch.sim.memory_stats(1)["allocation.all.current"], torch.sim.memory_allocated(1)
    model = torch.nn.Linear(64, 64).to("sim:1")
    model(torch.randn(2, 64, device="sim:1")).sum().backward()
    extra = torch.ones(256, device="sim:1", requires_grad=True)
    extra.grad, extra.note = torch.ones(256, device="sim:1"), "kept"
    one = torch.sim.memory_allocated(1) - base[1]
    twin, extra_twin = copy.deepcopy(model), copy.deepcopy(extra)
    assert twin.weight.grad is None and extra_twin.grad is not None and extra_twin.note == "kept"
    # the copy: weight and bias (64 floats, one 512-byte block), no grads; extra and its grad
    assert torch.sim.memory_allocated(1) - base[1] == one + 64 * 64 * 4 + 512 + 2 * 256 * 4
    del model, extra, twin, extra_twin
    gc.collect()
    assert (torch.sim.memory_stats(1)["allocation.all.current"], torch.sim.memory_allocated(1)) == base


def test_device_oom_before_touching_host_memory_and_capacity_setting():
    gs.set_memory_capacity("1GiB", device=1)
    try:
        assert torch.sim.mem_get_info(1)[1] == GiB and torch.sim.mem_get_info(0)[1] == 80 * GiB
        with pytest.raises(torch.OutOfMemoryError, match=r"^SIM out of memory\. Tried to allocate 2\.00 GiB\. GPU 1 "):
            torch.empty(2 * GiB, dtype=torch.uint8, device="sim:1")
        x = torch.empty(512 * MiB, dtype=torch.uint8, device="sim:1")
        del x
        assert torch.sim.memory_stats(1)["num_ooms"] == 1
    finally:
        gs.set_memory_capacity(80 * GiB)
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate 160.00 GiB. GPU 0 has a total capacity of 80.00 GiB"):
        torch.empty(160 * GiB, dtype=torch.uint8, device="sim")


def test_capacity_from_install_and_env_in_subprocess():
    code = ("import torch, grader.simulated as gs\n"
            "gs.install(count=2, memory_capacity='3GiB')\n"
            "print(torch.sim.mem_get_info(0)[1], torch.sim.mem_get_info(1)[1])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.split() == [str(3 * GiB)] * 2, r.stderr
    code = "import torch, grader.simulated as gs\ngs.install()\nprint(torch.sim.get_device_properties(0).total_memory)\n"
    env = dict(os.environ, GRADER_SIM_MEMORY="512MiB")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert r.stdout.split() == [str(512 * MiB)], r.stderr


def test_book_memory_chapter_numbers():
    """book/memory.md, as recorded on an H200 (book/_recorded/memory.json), where no matmul is involved
    (cuBLAS workspaces are not modelled: LIMITS['library_workspaces']). In a fresh process: small tensors another
    test leaves alive keep a small segment reserved, which the model's biases would then share."""
    code = textwrap.dedent("""
        import torch, grader.simulated as gs
        gs.install()
        MiB = 2**20
        rep = lambda: (torch.sim.memory_allocated() / MiB, torch.sim.memory_reserved() / MiB)
        seen = []
        big = torch.empty(256 * MiB, dtype=torch.uint8, device="sim"); seen.append(rep())
        del big; seen.append(rep())
        again = torch.empty(256 * MiB, dtype=torch.uint8, device="sim"); seen.append(rep())
        del again
        torch.sim.empty_cache()
        model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(4)]).to("sim")
        seen.append((round(rep()[0], 1), rep()[1]))  # "model on GPU"
        x = torch.empty(2048, 4096, device="sim")
        t = torch.empty(2048, 4096, device="sim")
        seen.append((round(rep()[0], 1), rep()[1]))  # "batch on GPU"
        print(seen)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.strip() == str([(256.0, 256.0), (0.0, 256.0), (256.0, 256.0), (256.1, 258.0), (320.1, 322.0)]), \
        r.stderr[-2000:]


def test_per_process_memory_fraction_like_cuda():
    torch.sim.set_per_process_memory_fraction(0.05, 1)  # 4 GiB of the default 80 GiB
    try:
        assert torch.sim.get_per_process_memory_fraction(1) == pytest.approx(0.05)
        with pytest.raises(torch.OutOfMemoryError) as e:
            torch.empty(5 * GiB, dtype=torch.uint8, device="sim:1")
        msg = str(e.value)
        assert msg.startswith("SIM out of memory. Tried to allocate 5.00 GiB. GPU 1 has a total capacity of 80.00 GiB")
        assert "memory in use. 4.00 GiB allowed; Of the allocated memory" in msg
        x = torch.empty(3 * GiB, dtype=torch.uint8, device="sim:1")
        del x
    finally:
        torch.sim.set_per_process_memory_fraction(1.0, 1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        torch.sim.set_per_process_memory_fraction(1.5)
