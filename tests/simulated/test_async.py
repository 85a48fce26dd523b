"""The virtual clock: launches vs device time, sync points, events, copies in flight, host reads.

Each test pins an exact number of the model, so that changing the model (dropping a sync point,
mis-timing an event, copying eagerly) fails a test."""
import pytest
import torch

import grader.simulated as gs
from grader.simulated import config

LAUNCH, KERNEL = config.LAUNCH_US / 1000, config.KERNEL_US / 1000  # ms


def _work(x, n=50):
    for _ in range(n):
        x = x * 1.0
    return x


def _idle():
    torch.sim.synchronize()
    torch.sim.synchronize(1)


def test_host_time_without_sync_measures_launch_only():
    x = torch.ones(8, device="sim")
    _idle()
    t0 = gs.host_time()
    _work(x, 50)
    assert gs.host_time() - t0 == pytest.approx(50 * LAUNCH)
    assert gs.device_time() - t0 == pytest.approx(LAUNCH + 50 * KERNEL)
    torch.sim.synchronize()
    assert gs.host_time() - t0 == pytest.approx(LAUNCH + 50 * KERNEL)


def test_event_elapsed_time_is_the_device_time_between_records():
    x = torch.ones(8, device="sim")
    _idle()
    start, end = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
    start.record()
    _work(x, 50)
    end.record()
    assert not end.query()
    with pytest.raises(RuntimeError, match="Both events must be completed before calculating elapsed time."):
        start.elapsed_time(end)
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) == pytest.approx(LAUNCH + 50 * KERNEL, abs=1e-9)
    # busy device: a second interval measures exactly its kernels, not the host's launches
    _work(x, 20)
    a, b = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
    a.record()
    _work(x, 10)
    b.record()
    b.synchronize()
    assert a.elapsed_time(b) == pytest.approx(10 * KERNEL, abs=1e-9)


def test_data_dependent_ops_are_sync_points(rec):
    x = torch.tensor([0.0, 1.0, 0.0, 2.0], device="sim")
    for op, reason in ((lambda: x.nonzero(), "nonzero"), (lambda: x.masked_select(x > 0), "masked_select"),
                       (lambda: x[x > 0], "index"), (lambda: torch.equal(x, x), "item")):
        _work(x, 20)
        assert gs.device_time() > gs.host_time()
        n0 = rec.n_syncs
        op()
        assert gs.host_time() == gs.device_time(), reason
        assert rec.n_syncs == n0 + 1, reason


def test_nonzero_and_masked_select_record_their_reason():
    x = torch.tensor([0.0, 1.0, 0.0, 2.0], device="sim")
    with gs.record() as rec:
        x.nonzero()
        torch.masked_select(x, x > 0)
        x[x > 0]
        x[x > 1] = 0.0
    assert rec.sync_reasons == ["nonzero", "masked_select", "nonzero", "nonzero"]


def test_non_blocking_d2h_is_stale_until_sync(rec):
    x = torch.arange(1.0, 5.0, device="sim")
    y = x.to("cpu", non_blocking=True)
    assert y.is_pinned()
    # Before the copy lands the host finds values no result has (on CUDA: whatever the memory held, which an
    # unlucky draw can make equal to the answer): a read too early is always wrong here, never right by chance.
    assert torch.isnan(y).all()
    torch.sim.synchronize()
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]
    dst = torch.full((4,), -1.0).pin_memory()
    dst.copy_(x * 2, non_blocking=True)
    x.mul_(0)  # later work does not affect the queued copy
    assert torch.isnan(dst).all()  # not yet the copy's values (nor, here, the buffer's old ones)
    ev = torch.sim.Event()
    ev.record()
    ev.synchronize()
    assert dst.tolist() == [2.0, 4.0, 6.0, 8.0]
    assert rec.d2h[0].non_blocking and rec.d2h[0].pinned
    # an implicit sync (item) also completes pending copies
    z = torch.zeros(2, dtype=torch.int64).pin_memory()
    z.copy_(torch.ones(2, dtype=torch.int64, device="sim"), non_blocking=True)
    assert z.tolist() == [torch.iinfo(torch.int64).min] * 2  # integers: the type's far end
    torch.ones(1, device="sim").item()
    assert z.tolist() == [1, 1]


def test_non_blocking_to_pageable_is_immediate():
    x = torch.arange(3.0, device="sim")
    dst = torch.zeros(3)
    dst.copy_(x, non_blocking=True)
    assert dst.tolist() == [0.0, 1.0, 2.0]


# ---- host -> device copies (issue 11, item 5)
def test_non_blocking_h2d_from_pinned_reads_the_source_when_the_device_runs_it():
    _idle()
    src = torch.arange(4.0).pin_memory()
    with gs.record() as rec:
        y = src.to("sim", non_blocking=True)
        assert rec.n_syncs == 0 and rec.h2d[0].pinned and rec.h2d[0].non_blocking
        src.fill_(7.0)  # before the device ran the copy: the device sees the new data (a race on a GPU)
        assert (y * 1).cpu().tolist() == [7.0] * 4
    assert len(rec.races) == 1 and rec.races[0].device == "sim:0" and rec.races[0].nbytes == 16


def test_non_blocking_h2d_then_use_without_race(rec):
    src = torch.arange(4.0).pin_memory()
    y = src.to("sim", non_blocking=True)
    assert (y * 2).cpu().tolist() == [0.0, 2.0, 4.0, 6.0]
    assert rec.races == [] and rec.sync_reasons == ["to_cpu_blocking"]


def test_host_write_while_the_copy_is_still_in_flight_is_a_race():
    _idle()
    big = torch.zeros(3_000_000).pin_memory()  # 12 MB: 1 ms on the virtual PCIe link
    with gs.record() as rec:
        y = big.to("sim", non_blocking=True)
        z = y + 1  # the device will run the copy first (stream order)
        big.fill_(5.0)  # host time is still before the copy's completion
        assert gs.host_time() < gs.device_time()
        torch.sim.synchronize()
    assert len(rec.races) == 1
    assert y[0].item() == 5.0  # later reads see the torn/new data
    assert z[0].item() == 1.0  # already computed from the old data (see LIMITS['h2d_race_window'])


def test_host_write_after_sync_is_not_seen(rec):
    src = torch.arange(4.0).pin_memory()
    y = src.to("sim", non_blocking=True)
    torch.sim.synchronize()
    src.zero_()
    assert y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0] and rec.races == []


def test_pageable_non_blocking_h2d_is_staged(rec):
    src = torch.arange(4.0)
    y = src.to("sim", non_blocking=True)
    src.zero_()
    assert y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert rec.sync_reasons == ["to_cpu_blocking"]  # the upload itself did not sync
    assert not rec.h2d[0].pinned and rec.h2d[0].non_blocking


def test_blocking_h2d_is_a_sync_point(rec):
    torch.ones(2).to("sim")
    assert rec.sync_reasons == ["to_device_blocking"]


# ---- pin_memory (issue 11, item 3)
def test_pin_memory_of_device_tensor_raises_like_cuda():
    with pytest.raises(RuntimeError) as e:
        torch.ones(2, device="sim").pin_memory()
    assert str(e.value) == "cannot pin 'torch.sim.FloatTensor' only dense CPU tensors can be pinned"
    with pytest.raises(RuntimeError, match="cannot pin 'torch.sim.LongTensor'"):
        torch.ones(2, dtype=torch.long, device="sim:1").pin_memory()
    assert not torch.ones(2, device="sim").is_pinned()


# ---- sync points and host reads (issue 11, item 13)
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


def test_host_reads_are_recorded_with_their_reason(rec):
    x = torch.arange(4.0, device="sim")
    s = x.sum()
    s.item()
    int(s)
    float(s)
    bool(s)
    if s:
        pass
    x.tolist()
    [0, 1, 2][torch.tensor(1, device="sim")]
    f"{s:.1f}"
    torch.tensor([s, s])  # converts each device scalar with float()
    x.cpu()  # a copy, not a host read
    assert rec.host_read_reasons == ["item", "int", "float", "bool", "bool", "tolist", "index", "item",
                                     "float", "float"]
    assert all(r.device == "sim:0" for r in rec.host_reads)
    assert rec.host_reads[0].reason == "item" and "host_reads" in repr(rec)


def test_launch_count(rec):
    x = torch.ones(4, device="sim")
    n0 = rec.launches
    y = (x + 1) * 2
    y.view(2, 2)  # views launch nothing
    assert rec.launches - n0 == 2


def test_record_collects_only_inside():
    x = torch.ones(2, device="sim")
    with gs.record() as r:
        x.sum().item()
    x.sum().item()
    assert r.n_syncs == 1 and len(r.host_reads) == 1


def test_sync_debug_mode_like_cuda():
    x = torch.ones(3, device="sim")
    torch.sim.set_sync_debug_mode("error")
    try:
        with pytest.raises(RuntimeError, match="called a synchronizing SIM operation"):
            x.sum().item()
        torch.sim.synchronize()  # explicit synchronisation is not reported
    finally:
        torch.sim.set_sync_debug_mode(0)
    torch.sim.set_sync_debug_mode("warn")
    try:
        with pytest.warns(UserWarning, match="called a synchronizing SIM operation"):
            x.cpu()
    finally:
        torch.sim.set_sync_debug_mode("default")
    assert torch.sim.get_sync_debug_mode() == 0


def test_kernels_cost_sets_the_virtual_cost_of_each_kernel():
    # time_matmul's legs: its products cost a day of virtual time (test_time_matmul_virtual.py)
    from grader.simulated.clock import kernel_cost, kernels_cost, read_host_clock

    x = torch.ones(8, device="sim")
    _idle()
    with kernels_cost(3000.0):
        t0 = gs.host_time()
        _work(x, 3)
        assert gs.host_time() - t0 == pytest.approx(3 * LAUNCH)  # launching stays quick
        assert gs.device_time() - t0 == pytest.approx(LAUNCH + 3 * 3.0)
        start, end = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
        start.record()
        _work(x, 2)
        end.record()
        assert not end.query()
        end.synchronize()
        assert start.elapsed_time(end) == pytest.approx(2 * 3.0)  # queued behind the three
        seconds = read_host_clock()
        assert seconds == pytest.approx(gs.host_time() / 1000)
        assert read_host_clock() > seconds  # each read costs the host, so a loop waiting on the clock ends
    assert kernel_cost.kernel_us is None
    t0 = gs.host_time()
    _work(x, 1)
    assert gs.device_time() - t0 == pytest.approx(LAUNCH + KERNEL)  # the usual model again


def test_a_copy_run_whose_source_nothing_holds_is_no_longer_watched():
    # A loop that never waits: without the drop, every later operation looked at every copy of the loop
    from grader.simulated.clock import clock

    x = torch.ones(8, device="sim")
    _idle()
    kept = []
    for step in range(6):
        batch = torch.ones(256).pin_memory()
        if step == 4:
            kept.append(batch)  # still reachable: a write to it would be a race
        batch.to("sim", non_blocking=True)
        _work(x, 50)  # the device falls behind: the copies are still in flight
    watched = {id(item[3]) for item in clock.pending_h2d}
    assert watched == {id(kept[0]), id(batch)}
    torch.sim.synchronize()
    assert clock.pending_h2d == []
