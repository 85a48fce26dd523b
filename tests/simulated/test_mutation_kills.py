"""Unit tests of the simulator's virtual clock, recorder and allocator, written to kill the mutants the
behavioural tests (test_async, test_accelerator, test_allocator) let through: exact virtual times, boundary
cases of the sync rules, recorder bookkeeping. The clock tests run on a fresh Clock swapped in for the
shared one. See benchmarks/results/mutation.md; tools/mutation/run.sh reruns the mutation run."""

from __future__ import annotations

import warnings

import pytest
import torch

from grader.simulated import clock as ck
from grader.simulated import config
from grader.simulated import instruments as ins


@pytest.fixture
def c(monkeypatch):
    fresh = ck.Clock()
    monkeypatch.setattr(ck, "clock", fresh)
    monkeypatch.setattr(ck, "sync_debug_mode", [0])
    monkeypatch.setattr(ck._tls, "reason", None, raising=False)
    return fresh


class Src:
    """A pinned source stand-in: a version counter, a size, and data to copy."""

    def __init__(self, value=1.0, n=4):
        self.data = torch.full((n,), value)
        self._version = 0

    def numel(self):
        return self.data.numel()

    def element_size(self):
        return 4

    def write(self, value):
        self.data.fill_(value)
        self._version += 1


class Dst:
    def __init__(self, n=4):
        self.data = torch.zeros(n)

    def copy_(self, src):
        self.data.copy_(src.data)


# ----------------------------------------------------------------------------------------------- clock
def test_a_fresh_clock_starts_at_zero_with_two_devices():
    fresh = ck.Clock()
    assert fresh.host == 0.0 and fresh.device == [0.0, 0.0] and fresh.pending == [] and fresh.pending_h2d == []
    fresh.reset(3)
    assert fresh.device == [0.0, 0.0, 0.0]


def test_launch_times_and_counts(c):
    ck.launch(0)
    assert c.host == config.LAUNCH_US and c.device == [config.LAUNCH_US + config.KERNEL_US, 0.0]
    ck.launch(0, cost=100.0)  # queued behind the first: starts when the device is free, not at launch
    assert c.device[0] == config.LAUNCH_US + config.KERNEL_US + 100.0
    c.host = c.device[1] = 50.0
    ck.launch(1)  # host == device: starts at the host time
    assert c.device[1] == 50.0 + config.LAUNCH_US + config.KERNEL_US
    c.host, c.device[1] = 1000.0, 10.0
    ck.launch(1, cost=1.0)  # idle device starts when launched
    assert c.device[1] == 1000.0 + config.LAUNCH_US + 1.0
    with ins.record() as outer, ins.record() as inner:
        ck.launch(0, name="add")
        ck.launch(0, name="add")
        ck.launch(0)
        ck.launch(0, name="mul")
    for rec in (outer, inner):
        assert rec.launches == 4 and rec.ops == {"add": 2, "mul": 1}


def test_host_and_device_time_in_milliseconds(c):
    c.host, c.device = 2500.0, [1000.0, 4000.0]
    assert ck.host_time() == 2.5
    assert ck.device_time(torch.device("sim:1")) == 4.0 and ck.device_time(0) == 1.0


def test_copy_cost():
    assert ck.copy_cost(0) == config.COPY_FIXED_US
    assert ck.copy_cost(24_000) == config.COPY_FIXED_US + 24_000 / config.COPY_BYTES_PER_US
    assert ck.copy_cost(100_000, bw=50_000.0) == config.COPY_FIXED_US + 2.0


def test_sync_waits_for_one_device_or_all(c):
    c.host, c.device = 10.0, [30.0, 70.0]
    ck.sync("item", 0)
    assert c.host == 30.0
    ck.sync("synchronize")
    assert c.host == 70.0
    c.device = [5.0, 6.0]
    ck.sync("item", 1)  # already past: the host clock never goes back
    assert c.host == 70.0
    c.device = []
    ck.sync("x")
    assert c.host == 70.0


def test_sync_records_once_per_outer_reason(c):
    with ins.record() as rec:
        ck.sync("synchronize", 1)
        ck.sync("synchronize")
        with ck.reason("print"):
            ck.sync("item", 0)
            ck.sync("item", 0)
    assert [(s.reason, s.device) for s in rec.syncs] == [("synchronize", "sim:1"), ("synchronize", None),
                                                          ("print", "sim:0")]
    assert rec.n_syncs == 3 and rec.sync_reasons == ["synchronize", "synchronize", "print"]


def test_wait_until(c):
    c.host = 10.0
    with ins.record() as rec:
        ck.wait_until(40.0, "event", "sim:1")
        assert c.host == 40.0
        ck.wait_until(20.0, "event", "sim:0")
        assert c.host == 40.0
    assert [(s.reason, s.device) for s in rec.syncs] == [("event", "sim:1"), ("event", "sim:0")]


def test_reason_notes_the_outermost_host_read(c, monkeypatch):
    monkeypatch.setattr(config, "CURRENT", [1])
    with ins.record() as rec:
        with ck.reason("item", read="item"):
            with ck.reason("bool", read="bool"):
                pass
        with ck.reason("item", read="item", idx=0):
            pass
        with ck.reason("print"):  # no read
            pass
    assert [(r.reason, r.device) for r in rec.host_reads] == [("item", "sim:1"), ("item", "sim:0")]
    assert rec.host_read_reasons == ["item", "item"]
    with ck.reason("item", read="item"):  # no recorder: nothing to note, no error
        pass
    assert ck._tls.reason is None


def test_sync_debug_mode(c, monkeypatch):
    monkeypatch.setattr(ck, "sync_debug_mode", [1])
    with pytest.warns(UserWarning, match="called a synchronizing SIM operation"):
        ck.sync("item", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ck.sync("synchronize", 0)  # explicit: never flagged
        ck.sync("event", 0)
        with ck.reason("synchronize"):
            ck.sync("item", 0)  # the outer reason is explicit
    monkeypatch.setattr(ck, "sync_debug_mode", [2])
    with pytest.raises(RuntimeError, match="called a synchronizing SIM operation"):
        ck.sync("item", 0)
    with pytest.raises(RuntimeError):
        with ck.reason("print"):
            ck.sync("item", 0)
    calls = []
    monkeypatch.setattr(ck, "_sync_debug", calls.append)
    with ck.reason("print"):
        ck.sync("item", 0)
        ck.sync("item", 0)  # already recorded under this reason: flagged once
    assert calls == ["print"]
    monkeypatch.setattr(ck, "sync_debug_mode", [0])
    ck.sync("item", 0)
    assert calls == ["print"]


def test_sync_debug_warns_at_the_callers_level(monkeypatch):
    monkeypatch.setattr(ck, "sync_debug_mode", [1])
    seen = []
    monkeypatch.setattr(warnings, "warn", lambda msg, stacklevel=1: seen.append(stacklevel))
    ck._sync_debug("item")
    assert seen == [4]


def test_h2d_copy_lands_when_the_device_runs_it(c):
    src, dst = Src(1.0), Dst()
    c.device[0] = 100.0
    ck.queue_h2d(0, dst, src)
    assert c.pending_h2d[0][:2] == [100.0, 0] and c.pending_h2d[0][4:] == [0, False]
    assert dst.data.sum() == 0
    ck.settle_h2d()  # the next op on the device: the copy runs first
    assert dst.data.tolist() == [1.0] * 4 and len(c.pending_h2d) == 1 and c.pending_h2d[0][5] is True
    with ins.record() as rec:
        src.write(2.0)  # the host writes the source before the device finished the copy: a race
        ck.settle_h2d()
    assert [(r.device, r.nbytes) for r in rec.races] == [("sim:0", 16)] and dst.data[0] == 2.0
    c.host = 100.0
    with ins.record() as rec:
        ck.settle_h2d()  # unchanged, done: dropped, no race
    assert rec.races == [] and c.pending_h2d == []


def test_h2d_write_after_the_copy_finished_is_no_race(c):
    src, dst = Src(1.0), Dst()
    c.device[1] = 50.0
    ck.queue_h2d(1, dst, src)
    ck.settle_h2d()
    c.host = 50.0  # exactly when the copy completes
    src.write(3.0)
    with ins.record() as rec:
        ck.settle_h2d()
    assert rec.races == [] and c.pending_h2d == []
    src2, dst2 = Src(1.0), Dst()
    c.device[1] = 80.0
    ck.queue_h2d(1, dst2, src2)
    src2.write(5.0)  # before the device even started it: not applied yet, a race
    with ins.record() as rec:
        ck.settle_h2d()
    assert len(rec.races) == 1 and rec.races[0].device == "sim:1" and dst2.data[0] == 5.0


def test_the_sync_debug_mode_is_off_by_default():
    assert ck.sync_debug_mode == [0]


def test_wait_until_judges_races_before_waiting(c):
    src, dst = Src(1.0), Dst()
    c.device[0] = 100.0
    ck.queue_h2d(0, dst, src)
    ck.settle_h2d()
    src.write(2.0)  # while the copy is in flight (host at 0, copy done at 100)
    with ins.record() as rec:
        ck.wait_until(200.0, "event", "sim:0")
    assert len(rec.races) == 1 and c.host == 200.0 and dst.data[0] == 2.0


def test_sync_settles_h2d_and_applies_d2h(c):
    src, dst = Src(7.0), Dst()
    c.device[0] = 100.0
    ck.queue_h2d(0, dst, src)
    host_dst, dev_src = Dst(), Src(9.0)
    c.pending.append((100.0, 0, host_dst, dev_src))
    later_dst = Dst()
    c.pending.append((500.0, 0, later_dst, Src(4.0)))
    ck.apply_pending()
    assert dst.data[0] == 7.0 and host_dst.data[0] == 0.0 and len(c.pending) == 2
    ck.sync("synchronize", 0)
    assert c.host == 100.0 and host_dst.data[0] == 9.0 and later_dst.data[0] == 0.0 and len(c.pending) == 1
    assert c.pending_h2d == []
    c.host = 500.0
    ck.apply_pending()
    assert later_dst.data[0] == 4.0 and c.pending == []


def test_wait_until_settles_copies(c):
    src, dst = Src(7.0), Dst()
    c.device[0] = 100.0
    ck.queue_h2d(0, dst, src)
    host_dst = Dst()
    c.pending.append((60.0, 0, host_dst, Src(9.0)))
    ck.wait_until(60.0, "event", "sim:0")
    assert dst.data[0] == 7.0 and host_dst.data[0] == 9.0 and len(c.pending_h2d) == 1 and c.pending == []


# ----------------------------------------------------------------------------------------- the recorder
def test_recorder_totals_and_repr():
    with ins.record() as rec:
        ins.note_copy("h2d", 100, True, True, "cpu", "sim:0")
        ins.note_copy("d2h", 30, False, False, "sim:0", "cpu")
        ins.note_copy("d2d", 7, False, False, "sim:0", "sim:1")
        ins.note_copy("h2d", 1, False, False, "cpu", "sim:1")
    assert rec.launches == 0 and rec.ops == {}
    assert (rec.bytes_h2d, rec.bytes_d2h, rec.bytes_d2d) == (101, 30, 7)
    assert [x.nbytes for x in rec.copies] == [100, 1, 30, 7]
    assert rec.h2d[0].non_blocking and rec.h2d[0].pinned and rec.h2d[0].dst == "sim:0"
    assert repr(rec) == "Recorder(launches=0, h2d=2, d2h=1, d2d=1, syncs=[], host_reads=[])"
    assert "RaceRecord(sim:0, 16 B)" == repr(ins.RaceRecord("sim:0", 16))
    assert ins.recorders == []
    ins.note_copy("h2d", 1, False, False, "cpu", "sim:0")  # no recorder: nothing
    ins.note_race("sim:0", 1)
    ins.note_host_read("item", "sim:0")


def test_recorder_is_removed_even_on_error():
    with pytest.raises(ValueError):
        with ins.record():
            raise ValueError
    assert ins.recorders == []


# ------------------------------------------------------------------------------------------- allocator
from grader.simulated import allocator as al  # noqa: E402

MiB = al.MiB


def test_sizes_and_their_text(monkeypatch):
    assert [al.round_size(n) for n in (-5, 0, 1, 511, 512, 513, 1024)] == [0, 0, 512, 512, 512, 1024, 1024]
    assert al.allocation_size(MiB) == 2 * MiB and al.allocation_size(MiB + 512) == 20 * MiB
    assert al.allocation_size(10 * MiB - 512) == 20 * MiB and al.allocation_size(10 * MiB) == 10 * MiB
    assert al.allocation_size(11 * MiB) == 12 * MiB
    assert al.parse_size("1000") == 1000 and al.parse_size(" 3 ") == 3 and al.parse_size(7.9) == 7
    assert al.parse_size("2k") == 2048 and al.parse_size("512 MiB") == 512 * MiB and al.parse_size("1.5G") == 3 * 2**29
    assert al.parse_size("80GiB") == 80 * 2**30 and al.parse_size("1tb") == 2**40
    with pytest.raises(ValueError, match=r"not a memory size: '12 apples' \(use e.g. 80GiB"):
        al.parse_size("12 apples")
    monkeypatch.delenv(al.CAPACITY_ENV, raising=False)
    assert al.default_capacity() == 80 * 2**30
    monkeypatch.setenv(al.CAPACITY_ENV, "3MiB")
    assert al.default_capacity() == 3 * MiB and al.CachingAllocator().capacity == 3 * MiB
    assert [al.format_size(n) for n in (0, 1024, 1025, MiB, MiB + 1, 2**30, 2**30 + 1)] == [
        "0 bytes", "1024 bytes", "1.00 KiB", "1024.00 KiB", "1.00 MiB", "1024.00 MiB", "1.00 GiB"]


def test_stat_add():
    s = al.Stat()
    s.add(5)
    s.add(1)
    s.add(-4)
    assert s.as_dict() == {"current": 2, "peak": 6, "allocated": 6, "freed": 4}


def stat(a, name, pool=0):
    return a.stats[name][pool].as_dict()


def test_allocator_blocks_stats_and_splits():
    a = al.CachingAllocator(capacity=80 * 2**30)
    assert a.alloc(0) is None
    A = a.alloc(1000)
    assert repr(A) == "Block(1024 B at 0x100000000, small, used)"
    B = a.alloc(3 * MiB)
    C = a.alloc(12 * MiB)
    assert repr(B) == f"Block({3 * MiB} B at {2**32 + 2 * MiB:#x}, large, used)"
    assert C.addr == B.addr + 3 * MiB
    a.release(B)
    a.release(B)  # twice: nothing more
    a.release(None)
    assert repr(B).endswith("large, free)")
    assert a.blocks() == [(2 * MiB, [(1024, True), (2 * MiB - 1024, False)]),
                          (20 * MiB, [(3 * MiB, False), (12 * MiB, True), (5 * MiB, False)])]
    assert (a.allocated, a.reserved, a.peak, a.peak_reserved, a.n_alloc, a.n_free) == (
        1024 + 12 * MiB, 22 * MiB, 1024 + 15 * MiB, 22 * MiB, 3, 1)
    assert stat(a, "allocation") == {"current": 2, "peak": 3, "allocated": 3, "freed": 1}
    assert stat(a, "allocation", 1) == {"current": 1, "peak": 1, "allocated": 1, "freed": 0}
    assert stat(a, "allocation", 2) == {"current": 1, "peak": 2, "allocated": 2, "freed": 1}
    assert stat(a, "allocated_bytes", 1) == {"current": 1024, "peak": 1024, "allocated": 1024, "freed": 0}
    assert stat(a, "requested_bytes") == {"current": 1000 + 12 * MiB, "peak": 1000 + 15 * MiB,
                                          "allocated": 1000 + 15 * MiB, "freed": 3 * MiB}
    assert stat(a, "segment") == {"current": 2, "peak": 2, "allocated": 2, "freed": 0}
    assert stat(a, "segment", 1)["current"] == 1 and stat(a, "segment", 2)["current"] == 1
    assert stat(a, "reserved_bytes", 2) == {"current": 20 * MiB, "peak": 20 * MiB, "allocated": 20 * MiB, "freed": 0}
    n = a.nested_stats()
    assert n["active"] == n["allocation"] and n["active_bytes"] == n["allocated_bytes"]
    split = lambda c, b: ({"current": c, "peak": c, "allocated": 0, "freed": 0},  # noqa: E731
                          {"current": b, "peak": b, "allocated": 0, "freed": 0})
    for pool, (count, nbytes) in {"all": (3, 10 * MiB - 1024), "small_pool": (1, 2 * MiB - 1024),
                                  "large_pool": (2, 8 * MiB)}.items():
        assert (n["inactive_split"][pool], n["inactive_split_bytes"][pool]) == split(count, nbytes), pool
    zero = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
    assert {k: n[k] for k in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                              "num_device_free", "max_split_size", "oversize_allocations", "oversize_segments")} == {
        "num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0, "num_device_alloc": 2,
        "num_device_free": 0, "max_split_size": -1, "oversize_allocations": zero, "oversize_segments": zero}
    flat = a.flat_stats()
    assert list(flat) == sorted(flat) and flat["allocated_bytes.all.current"] == 1024 + 12 * MiB
    assert flat["inactive_split.large_pool.current"] == 2 and flat["max_split_size"] == -1

    a.release(A)  # merges with the free rest: the small segment is whole again
    assert a.blocks()[0] == (2 * MiB, [(2 * MiB, False)])
    assert (a.n_alloc, a.n_free) == (3, 2)
    a.empty_cache()
    assert a.blocks() == [(20 * MiB, [(3 * MiB, False), (12 * MiB, True), (5 * MiB, False)])]
    assert stat(a, "segment", 1) == {"current": 0, "peak": 1, "allocated": 1, "freed": 1}
    assert stat(a, "reserved_bytes") == {"current": 20 * MiB, "peak": 22 * MiB, "allocated": 22 * MiB, "freed": 2 * MiB}
    assert a.num_device_free == 1
    a.release(C)  # merges with both free neighbours
    assert a.blocks() == [(20 * MiB, [(20 * MiB, False)])]
    assert a.nested_stats()["inactive_split"]["all"]["current"] == 0
    D = a.alloc(3 * MiB)  # reuses the cached segment: no new one
    assert D.addr == B.addr and a.num_device_alloc == 2
    a.release(D)
    a.empty_cache()
    assert a.blocks() == [] and a.reserved == 0 and a.free_large == [] and a.free_small == []
    a.reset_peak()
    assert stat(a, "allocated_bytes")["peak"] == 0 and stat(a, "reserved_bytes", 2)["peak"] == 0
    a.reset_accumulated()
    assert stat(a, "allocation", 2) == zero and (a.num_device_alloc, a.num_device_free) == (0, 0)


def test_split_thresholds():
    a = al.CachingAllocator(capacity=2**30)
    a.alloc(MiB)
    b = a.alloc(MiB - 512)  # takes the 1 MiB rest and leaves exactly 512 bytes: split off
    assert b.size == MiB - 512 and a.blocks() == [(2 * MiB, [(MiB, True), (MiB - 512, True), (512, True and False)])]
    c = a.alloc(1)  # the 512-byte rest fits exactly
    assert c.size == 512 and c.addr == b.addr + MiB - 512
    a2 = al.CachingAllocator(capacity=2**30)
    big = a2.alloc(19 * MiB)  # a 20 MiB segment; the 1 MiB rest is not split off from a large block
    assert big.size == 20 * MiB and a2.blocks() == [(20 * MiB, [(20 * MiB, True)])]
    mid = a2.alloc(5 * MiB)
    assert a2.blocks()[1] == (20 * MiB, [(5 * MiB, True), (15 * MiB, False)]) and mid.size == 5 * MiB
    d = a2.alloc(15 * MiB - 512 * 2048)  # leaves exactly 1 MiB: not more than SMALL_SIZE, no split
    assert d.size == 15 * MiB


def test_release_merges_with_the_previous_block_and_relinks():
    a = al.CachingAllocator(capacity=2**30)
    x, y, z = a.alloc(512), a.alloc(512), a.alloc(512)
    a.release(x)
    a.release(y)  # merges into x: z's previous block is now x
    assert z.prev is x and a.blocks() == [(2 * MiB, [(1024, False), (512, True), (2 * MiB - 1536, False)])]
    a.release(z)  # merges into x, then with the free rest
    assert a.blocks() == [(2 * MiB, [(2 * MiB, False)])] and len(a.free_small) == 1
    b = al.CachingAllocator(capacity=2**30)
    first, last = b.alloc(MiB), b.alloc(MiB)  # the last block ends the segment (no rest split off)
    assert last.next is None
    b.release(first)
    b.release(last)
    assert b.blocks() == [(2 * MiB, [(2 * MiB, False)])]


def test_take_and_remove_free():
    a = al.CachingAllocator(capacity=2**30)
    x, y = a.alloc(MiB), a.alloc(512)
    a.release(x)  # 1 MiB free at the start of the segment
    assert a._take_free(a.free_small, MiB) is x and a._take_free(a.free_small, MiB) is not x
    a._remove_free(al.Block(10**9, 0, None, True))  # not in the pool, larger than all: nothing happens
    a._remove_free(al.Block(10**9, 0, None, False))


def test_out_of_memory_and_retry():
    a = al.CachingAllocator(capacity=4 * MiB, device_index=1)
    with pytest.raises(torch.OutOfMemoryError) as info:
        a.alloc(3 * MiB)
    assert str(info.value).startswith(
        "SIM out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 4.00 MiB of which 4.00 MiB is "
        "free. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the allocated memory 0 bytes "
        "is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated "
        "memory is large try setting PYTORCH_SIM_ALLOC_CONF=expandable_segments:True")
    assert (a.num_alloc_retries, a.num_ooms) == (1, 1)
    a = al.CachingAllocator(capacity=21 * MiB)
    a.release(a.alloc(100))  # a cached small segment (2 MiB) ...
    a.alloc(3 * MiB)  # ... is given back so that the 20 MiB one fits
    assert (a.num_alloc_retries, a.num_ooms, a.num_device_free) == (1, 0, 1)
    exact = al.CachingAllocator(capacity=2 * MiB)
    exact.alloc(100)  # exactly the capacity: fits
    exact.capacity = 1
    assert exact.mem_get_info() == (0, 1)
    assert al.CachingAllocator(capacity=3 * MiB).mem_get_info() == (3 * MiB, 3 * MiB)
    limited = al.CachingAllocator(capacity=2**30)
    limited.allowed = MiB
    with pytest.raises(torch.OutOfMemoryError, match=r"GPU 0 has a total capacity"):  # device 0 by default
        limited.alloc(100)
    with pytest.raises(torch.OutOfMemoryError, match=r"this process has 0 bytes memory in use\. 1024.00 KiB allowed; Of"):
        limited.alloc(100)
    limited.allowed = 2 * MiB
    limited.alloc(100)


# ---- streams and events (issue 31: the survivors of grader/simulated/streams.py) ----------------------------
from grader.simulated import generators as gens  # noqa: E402
from grader.simulated import streams as st  # noqa: E402


def test_a_new_stream_has_an_id_of_its_own_and_the_default_stream_id_0():
    default = torch.sim.default_stream(1)
    s, t = torch.sim.Stream("sim:1"), torch.sim.Stream("sim:1")
    assert default.stream_id == 0 and isinstance(s.stream_id, int) and s.stream_id > 0
    assert len({default.stream_id, s.stream_id, t.stream_id}) == 3
    assert s != default and s == s and hash(s) != hash(default)
    assert repr(s) == f"torch.Stream device_type=sim, device_index=1, stream_id={s.stream_id}"


@pytest.fixture
def device_times():
    """The clock's device and stream times (streams.py holds the clock itself), put back after the test."""
    saved, streams = list(st.clock.device), dict(st.clock.streams)
    yield st.clock
    st.clock.device[:] = saved
    st.clock.streams.clear()
    st.clock.streams.update(streams)


def test_waiting_moves_a_stream_forward_never_back(device_times):
    from grader.simulated.clock import set_stream_end, stream_end

    s0, s1 = torch.sim.Stream("sim:0"), torch.sim.Stream("sim:0")
    set_stream_end(0, s0.stream_id, 5.0)
    set_stream_end(0, s1.stream_id, 9.0)
    s0.wait_stream(s1)  # a stream behind waits for the one ahead
    assert stream_end(0, s0.stream_id) == 9.0
    set_stream_end(0, s1.stream_id, 2.0)
    s0.wait_stream(s1)  # never back
    assert stream_end(0, s0.stream_id) == 9.0
    unrecorded = torch.sim.Event()
    s0.wait_event(unrecorded)  # nothing recorded: nothing to wait for, and no error
    assert stream_end(0, s0.stream_id) == 9.0
    e = s1.record_event(torch.sim.Event())
    e._time = 12.0
    s0.wait_event(e)
    assert stream_end(0, s0.stream_id) == 12.0
    e._time = 3.0
    s0.wait_event(e)  # an event already passed: never back
    assert stream_end(0, s0.stream_id) == 12.0


def test_record_event_records_the_given_event_or_a_new_one():
    s = torch.sim.Stream("sim:1")
    e = torch.sim.Event()
    assert repr(e) == "torch.Event device_type=sim, device_index=None, recorded=False" and e.device is None
    assert s.record_event(e) is e
    assert repr(e) == "torch.Event device_type=sim, device_index=1, recorded=True" and e.device == torch.device("sim:1")
    made = s.record_event()
    assert made is not e and isinstance(made, st.SimEvent) and made._time is not None
    on1 = torch.Event(device="sim:1")  # keeps the type only, as CUDA's does (recorded in the fidelity tables)
    assert on1.device == torch.device("sim")


def test_an_error_inside_a_stream_context_is_not_swallowed_and_the_stream_is_restored():
    s = torch.sim.Stream("sim:0")
    before = torch.sim.current_stream(0)
    with pytest.raises(ValueError, match="inside"):
        with s:
            assert torch.sim.current_stream(0) == s
            raise ValueError("inside")
    assert torch.sim.current_stream(0) == before
    with pytest.raises(ValueError, match="inside"):
        with torch.sim.stream(s):
            raise ValueError("inside")
    assert torch.sim.current_stream(0) == before


def test_torch_event_on_the_sim_does_not_time_unless_asked():
    e = torch.Event(device="sim:0")
    assert e.enable_timing is False
    e.record()
    f = torch.Event(device="sim:0")
    f.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        e.elapsed_time(f)
    assert torch.Event(device="sim:0", enable_timing=True).enable_timing is True


# ---- generators (the survivors of grader/simulated/generators.py) ----------------------------------------
def test_the_default_generators_start_from_cudas_default_seed():
    saved = [g.get_state() for g in gens.defaults]
    try:
        gens.reset_defaults(2)
        assert [g.initial_seed() for g in gens.defaults] == [67280421310721] * 2  # c10::default_rng_seed_val
        assert [g.device for g in gens.defaults] == [torch.device("sim:0"), torch.device("sim:1")]
    finally:
        for g, state in zip(gens.defaults, saved):
            g.set_state(state)


def test_poisson_takes_its_generator_by_position_and_refuses_a_sim_one_on_the_cpu():
    rates = torch.full((64,), 4.0)
    assert torch.poisson(rates).shape == (64,)  # no generator: none looked for past the arguments
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'sim'"):
        torch.poisson(rates, torch.Generator("sim:0"))
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
        torch.poisson(rates, generator=torch.Generator("sim:0"))
    assert torch.poisson(rates, torch.Generator("cpu").manual_seed(1)).shape == (64,)


def test_a_seeded_generator_passed_by_position_to_a_sim_op_decides_its_result():
    rates = torch.full((256,), 4.0, device="sim:1")

    def draw(seed):
        return torch.poisson(rates, generator=torch.Generator("sim:1").manual_seed(seed)).cpu()

    assert torch.equal(draw(3), draw(3)) and not torch.equal(draw(3), draw(4))
    assert torch.poisson(rates).device == torch.device("sim:1")  # without one: the device's default


def test_the_random_functions_keep_their_names_and_docs():
    assert torch.randn.__name__ == "randn" and torch.poisson.__name__ == "poisson"
    assert torch.Tensor.normal_.__name__ == "normal_" and torch.randn.__doc__


@pytest.fixture
def traced():
    """What grader.engine.instruments hears of waits on streams and events (torch.cuda._gpu_trace's callbacks)."""
    heard = []
    streams_cb, events_cb = (lambda sid: heard.append(("stream", sid))), (lambda eid: heard.append(("event", eid)))
    st.gpu_trace.register_callback_for_stream_synchronization(streams_cb)
    st.gpu_trace.register_callback_for_event_synchronization(events_cb)
    yield heard
    st.gpu_trace.stream_synchronization.remove(streams_cb)
    st.gpu_trace.event_synchronization.remove(events_cb)


def test_waits_on_a_stream_or_an_event_are_reported(traced):
    s = torch.sim.Stream("sim:0")
    s.synchronize()
    assert traced == [("stream", s.stream_id)]
    e = torch.sim.Event()
    e.synchronize()  # never recorded: neither waits nor is reported
    assert traced == [("stream", s.stream_id)]
    s.record_event(e)
    e.synchronize()
    assert traced == [("stream", s.stream_id), ("event", id(e))]


def test_an_event_makes_the_given_stream_or_the_current_one_wait(device_times):
    c = device_times
    e = torch.sim.Event()
    e._time, e._idx = max(c.device) + 50.0, 0
    s = torch.sim.Stream("sim:0")
    e.wait(s)
    assert c.device[0] == e._time
    e._time += 10.0
    e.wait()  # the current stream of the current device
    assert c.device[torch.sim.current_device()] == e._time


def test_elapsed_time_needs_both_events_timed():
    timed, untimed = torch.sim.Event(enable_timing=True), torch.sim.Event()
    timed.record()
    untimed.record()
    for a, b in ((timed, untimed), (untimed, timed)):
        with pytest.raises(ValueError, match="enable_timing=True"):
            a.elapsed_time(b)


def test_torch_sim_generator_defaults_to_the_first_device():
    g = torch.sim.Generator()
    assert g.device == torch.device("sim:0") and isinstance(g, gens.SimGenerator)
    assert torch.sim.Generator(1).device == torch.device("sim:1")


def test_elapsed_time_needs_both_events_recorded():
    a, b = torch.sim.Event(enable_timing=True), torch.sim.Event(enable_timing=True)
    a.record()
    for first, second in ((a, b), (b, a)):
        with pytest.raises(ValueError, match="must be recorded"):
            first.elapsed_time(second)


def test_without_a_device_the_current_accelerator_decides():
    assert st._is_sim(None) is False and st._is_sim("sim:1") is True and st._is_sim("cpu") is False
    assert st._is_sim(0) is st._accelerator_is_sim() is True  # this process's accelerator is the simulator
    assert isinstance(torch.Stream(), st.SimStream) and isinstance(torch.Event(), st.SimEvent)
    assert not isinstance(torch.Stream("cpu"), st.SimStream)


# ---- pinned memory (the survivors of grader/simulated/pinned.py) -----------------------------------------
from grader.simulated import pinned as pn  # noqa: E402


def test_pinning_an_empty_tensor_pins_no_other_empty_tensor():
    kept = torch.empty(0).pin_memory()  # alive: a registered address would stay registered meanwhile
    assert not torch.empty(0).is_pinned() and not pn.is_pinned_cpu(torch.empty(0))
    assert 0 not in pn._pinned and kept.numel() == 0


def test_a_tensor_without_a_storage_is_not_pinned():
    keep = torch.ones(4).pin_memory()  # something is pinned: the lookup runs
    assert keep.is_pinned()
    sparse = torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.0]), (3,))
    assert pn.is_pinned_cpu(sparse) is False
