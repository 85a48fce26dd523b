"""Issue 11, item 1: torch.accelerator, torch.Stream and torch.Event on the simulated device."""
import gc

import pytest
import torch

import grader.simulated as gs


def _work(x, n=10):
    for _ in range(n):
        x = x * 1.0
    return x


def test_accelerator_synchronize_waits_for_the_device_and_is_recorded():
    x = torch.ones(8, device="sim")
    torch.sim.synchronize()
    _work(x)
    assert gs.device_time() > gs.host_time()
    with gs.record() as rec:
        torch.accelerator.synchronize()
    assert gs.host_time() == gs.device_time()
    assert rec.sync_reasons == ["synchronize"] and rec.syncs[0].device == "sim:0"
    _work(torch.ones(8, device="sim:1"))
    with gs.record() as rec:
        torch.accelerator.synchronize("sim:1")
    assert gs.host_time() == gs.device_time(1) and rec.syncs[0].device == "sim:1"


def test_current_stream_set_stream_and_stream_context():
    s = torch.accelerator.current_stream()
    assert isinstance(s, torch.Stream) and s.device == torch.device("sim:0")
    assert s == torch.sim.current_stream() == torch.sim.default_stream()
    side = torch.Stream(device="sim")
    assert isinstance(side, torch.Stream) and isinstance(side, torch.sim.Stream) and side != s
    torch.accelerator.set_stream(side)
    try:
        assert torch.accelerator.current_stream() == side
    finally:
        torch.accelerator.set_stream(s)
    with torch.sim.stream(side):
        assert torch.sim.current_stream() == side
    assert torch.sim.current_stream() == s
    s1 = torch.Stream(device="sim:1")
    assert s1.device == torch.device("sim:1") and s1.device_index == 1
    assert torch.accelerator.current_stream(1).device_index == 1
    # a CPU stream is still the real class
    assert type(torch.Stream(device="cpu")) is torch._C.Stream


def test_stream_query_and_synchronize_follow_the_clock(rec):
    s = torch.accelerator.current_stream()
    torch.sim.synchronize()
    assert s.query()
    _work(torch.ones(8, device="sim"))
    assert not s.query()
    n0 = rec.n_syncs
    s.synchronize()
    assert s.query() and rec.sync_reasons[n0:] == ["synchronize"]


def test_torch_event_with_sim_device_times_the_device():
    x = torch.ones(8, device="sim")
    torch.sim.synchronize()
    start = torch.Event(device="sim", enable_timing=True)
    end = torch.Event(device="sim", enable_timing=True)
    assert isinstance(start, torch.Event) and isinstance(start, torch.sim.Event)
    start.record()
    _work(x, 10)
    end.record()
    assert not end.query()
    end.synchronize()
    assert end.query()
    # idle device: the first kernel starts one launch (5 us) after the start event, then 10 kernels of 20 us
    # run back to back (the host launches faster than the device runs them)
    assert start.elapsed_time(end) == pytest.approx(0.005 + 10 * 0.020, abs=1e-9)
    assert type(torch.Event(device="cpu")) is torch._C.Event


def test_event_errors_like_cuda():
    a, b = torch.sim.Event(), torch.sim.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        a.elapsed_time(b)
    c, d = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time."):
        c.elapsed_time(d)


def test_accelerator_memory_functions():
    gc.collect()
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats()
    base = torch.accelerator.memory_allocated()
    assert base == torch.sim.memory_allocated()
    x = torch.empty(1000, device="sim")
    assert torch.accelerator.memory_allocated() - base == 4096
    assert torch.accelerator.max_memory_allocated() - base == 4096
    assert torch.accelerator.memory_reserved() == torch.sim.memory_reserved() >= 2 * 2**20
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.sim.memory_allocated()
    assert stats["allocation.all.current"] >= 1 and "reserved_bytes.small_pool.current" in stats
    del x
    gc.collect()
    assert torch.accelerator.memory_allocated() == base
    assert torch.accelerator.max_memory_allocated() - base == 4096
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == base
    free, total = torch.accelerator.get_memory_info()
    assert total == torch.sim.get_device_properties(0).total_memory and free == total - torch.sim.memory_reserved()
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_reserved() <= torch.sim.memory_reserved(0)


def test_device_index_functions_follow_the_current_device():
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.set_device_index(1)
    try:
        assert torch.sim.current_device() == 1 and torch.accelerator.current_device_index() == 1
        assert torch.empty(1, device="sim").device == torch.device("sim:1")
    finally:
        torch.accelerator.set_device_index(0)
    with torch.accelerator.device_index(1):
        assert torch.sim.current_device() == 1
    assert torch.sim.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.accelerator.set_device_index(5)
    assert torch.accelerator.get_device_capability()["supported_dtypes"]
