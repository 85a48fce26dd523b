import gc

import pytest
import torch

import grader.simulated as gs


def _work(x, n=50):
    for _ in range(n):
        x = x * 1.0
    return x


def test_host_time_without_sync_measures_launch_only():
    x = torch.ones(8, device="sim")
    torch.sim.synchronize()
    t0 = gs.host_time()
    _work(x)
    t_launch = gs.host_time() - t0
    torch.sim.synchronize()
    t_total = gs.host_time() - t0
    assert t_total > 2 * t_launch > 0
    assert gs.device_time() == pytest.approx(gs.host_time())


def test_events_measure_device_time():
    x = torch.ones(8, device="sim")
    start, end = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
    start.record()
    _work(x)
    end.record()
    assert not end.query()
    with pytest.raises(RuntimeError, match="device not ready"):
        start.elapsed_time(end)
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert ms > 0 and ms == pytest.approx(gs.host_time() - (end._time / 1000.0) + ms)


def test_non_blocking_d2h_is_stale_until_sync(rec):
    x = torch.arange(1.0, 5.0, device="sim")
    y = x.to("cpu", non_blocking=True)
    assert y.is_pinned()
    assert y.tolist() == [0.0, 0.0, 0.0, 0.0]  # deterministic stale data
    torch.sim.synchronize()
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]
    dst = torch.full((4,), -1.0).pin_memory()
    dst.copy_(x * 2, non_blocking=True)
    x.mul_(0)  # later work does not affect the queued copy
    assert dst.tolist() == [-1.0] * 4  # keeps previous contents
    ev = torch.sim.Event()
    ev.record()
    ev.synchronize()
    assert dst.tolist() == [2.0, 4.0, 6.0, 8.0]
    assert rec.d2h[0].non_blocking and rec.d2h[0].pinned
    # an implicit sync (item) also completes pending copies
    z = torch.zeros(2).pin_memory()
    z.copy_(torch.ones(2, device="sim"), non_blocking=True)
    torch.ones(1, device="sim").item()
    assert z.tolist() == [1.0, 1.0]


def test_non_blocking_to_pageable_is_immediate():
    x = torch.arange(3.0, device="sim")
    dst = torch.zeros(3)
    dst.copy_(x, non_blocking=True)
    assert dst.tolist() == [0.0, 1.0, 2.0]


def test_sync_points_are_recorded(rec):
    x = torch.arange(4.0, device="sim")
    torch.sim.synchronize()
    x.cpu()
    x.sum().item()
    x.tolist()
    bool(x.sum() > 0)
    repr(x)
    float(x[1])
    torch.ones(2).to("sim")
    assert rec.sync_reasons == ["synchronize", "to_cpu_blocking", "item", "tolist", "bool",
                                "print/repr", "item", "to_device_blocking"]
    assert rec.launches > 0 and rec.n_syncs == 8
    assert rec.bytes_d2h == 3 * 16 and rec.bytes_h2d == 8  # cpu(), tolist(), repr copy 16 B each


def test_launch_count(rec):
    x = torch.ones(4, device="sim")
    n0 = rec.launches
    y = (x + 1) * 2
    y.view(2, 2)  # views launch nothing
    assert rec.launches - n0 == 2


def test_memory_caching_allocator():
    gc.collect()
    torch.sim.empty_cache()
    base = torch.sim.memory_allocated()
    torch.sim.reset_peak_memory_stats()
    x = torch.empty(1000, device="sim")  # 4000 B -> 4096 (512-byte blocks)
    assert torch.sim.memory_allocated() - base == 4096
    v = x.view(10, 100)  # views share the block
    assert torch.sim.memory_allocated() - base == 4096
    del x
    gc.collect()
    assert torch.sim.memory_allocated() - base == 4096  # view keeps it alive
    del v
    gc.collect()
    assert torch.sim.memory_allocated() == base
    assert torch.sim.memory_reserved() >= base + 4096  # cached, still reserved
    assert torch.sim.max_memory_allocated() == base + 4096
    y = torch.empty(1000, device="sim")  # reuses the cached block
    reserved = torch.sim.memory_reserved()
    del y
    gc.collect()
    assert torch.sim.memory_reserved() == reserved
    torch.sim.empty_cache()
    assert torch.sim.memory_reserved() == torch.sim.memory_allocated()
    assert torch.sim.memory_allocated(1) == torch.sim.memory_allocated("sim:1")
    z = torch.empty(10, device="sim:1")
    assert torch.sim.memory_allocated(1) >= 512
    del z


def test_record_collects_only_inside():
    x = torch.ones(2, device="sim")
    with gs.record() as r:
        x.sum().item()
    x.sum().item()
    assert r.n_syncs == 1
