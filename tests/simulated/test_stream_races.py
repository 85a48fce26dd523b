"""Races between streams on the simulated device (grader/simulated/races.py, clock.py "Streams"): a read that
no wait orders after another stream's write sees NaN, a block freed while another stream uses it poisons that
use, and the waits that order two streams (wait_stream, wait_event, the host's synchronize) remove both."""

import pytest
import torch

import grader.simulated as gs
from grader.simulated.tensor import allocators

DEV = torch.device("sim:0")


@pytest.fixture
def streams():
    torch.sim.synchronize(0)
    current = torch.accelerator.current_stream(DEV)
    return current, torch.Stream(DEV)


def side_write(current, side):
    """A tensor the current stream fills with zeros, which the side stream then fills with ones."""
    x = torch.zeros(64, device=DEV)
    side.wait_stream(current)
    with side:
        x.fill_(1.0)
    return x


def read_on_current(x):
    return x.sum().item()


def test_a_read_no_wait_orders_sees_nan_and_is_recorded(streams, rec):
    current, side = streams
    x = side_write(current, side)
    assert read_on_current(x) != read_on_current(x)  # NaN
    assert [r.kind for r in rec.stream_races][:1] == ["read before the write"]
    assert rec.stream_races[0].writer == side.stream_id and rec.stream_races[0].reader == 0


@pytest.mark.parametrize("order", ["wait_stream", "wait_event", "event.wait", "side.synchronize",
                                   "event.synchronize", "device synchronize", "side.query"])
def test_each_wait_orders_the_read(streams, order, rec):
    current, side = streams
    x = side_write(current, side)
    if order == "wait_stream":
        current.wait_stream(side)
    elif order == "wait_event":
        current.wait_event(side.record_event())
    elif order == "event.wait":
        side.record_event().wait(current)
    elif order == "side.synchronize":
        side.synchronize()
    elif order == "event.synchronize":
        side.record_event().synchronize()
    elif order == "device synchronize":
        torch.accelerator.synchronize(DEV)
    else:
        while not side.query():
            pass
    assert read_on_current(x) == 64.0 and not rec.stream_races


def test_waits_that_do_not_cover_the_writer_leave_the_race(streams):
    current, side = streams
    x = side_write(current, side)
    current.synchronize()  # the current stream only
    torch.zeros(1, device=DEV).item()  # an implicit sync point waits for the current stream only
    side.wait_stream(current)  # the wrong direction
    assert read_on_current(x) != read_on_current(x)


def test_a_side_stream_reading_the_current_streams_write_needs_its_own_wait(streams):
    current, side = streams
    x = torch.ones(64, device=DEV) * 3  # written on the current stream, not yet known to the side stream
    with side:
        y = x * 2
    current.wait_stream(side)
    assert torch.isnan(y.cpu()).all()
    x2 = torch.ones(64, device=DEV) * 3
    side.wait_stream(current)
    with side:
        y2 = x2 * 2
    current.wait_stream(side)
    assert y2.cpu().tolist() == [6.0] * 64


def test_one_stream_is_never_a_race(streams, rec):
    _, side = streams
    with side:
        x = torch.ones(8, device=DEV)
        y = (x * 2).sum()
    side.synchronize()
    assert y.item() == 16.0 and not rec.stream_races


def reuse_after_free(current, side, *, record=False, copy_waits=False):
    """A batch allocated on the copy stream (side), read on the current stream behind other work, freed; then the
    next batch of the same size on the copy stream. Returns what the current stream computed from the first."""
    with side:
        batch = torch.ones(256, device=DEV)
    current.wait_stream(side)
    out = (batch * 2).sum() + 1  # two ops on the current stream, the second reads the first's output only
    if record:
        batch.record_stream(current)
    address = batch.data_ptr()
    del batch
    if copy_waits:
        side.wait_stream(current)
    with side:
        following = torch.full((256,), 7.0, device=DEV)
    return out, following.data_ptr() == address


def test_a_block_freed_while_another_stream_reads_it_poisons_that_read_and_what_follows(streams, rec):
    current, side = streams
    out, reused = reuse_after_free(current, side)
    assert reused
    assert out.cpu().isnan().all()  # the sum's output and the + 1 computed from it
    assert "reused while in use" in [r.kind for r in rec.stream_races]


def test_record_stream_keeps_the_block_until_the_reader_is_done(streams, rec):
    current, side = streams
    allocated = torch.sim.memory_allocated(0)
    with side:
        batch = torch.ones(256, device=DEV)
    current.wait_stream(side)
    out = (batch * 2).sum() + 1
    batch.record_stream(current)
    address = batch.data_ptr()
    del batch
    # freed for the counters at once, as CUDA's free() counts it, but not handed out before the reader is done
    assert torch.sim.memory_allocated(0) == allocated + 512  # out only
    with side:
        early = torch.empty(256, device=DEV)
    assert early.data_ptr() != address
    assert out.item() == 513.0 and not rec.stream_races  # the host has waited for the current stream
    with side:
        later = torch.empty(256, device=DEV)  # the allocator looks at the kept blocks when it allocates
    assert later.data_ptr() == address


def test_the_copy_stream_waiting_for_the_reader_makes_the_reuse_safe(streams, rec):
    current, side = streams
    out, reused = reuse_after_free(current, side, copy_waits=True)
    assert reused and out.item() == 513.0 and not rec.stream_races


def test_a_freed_block_goes_only_to_its_own_streams_requests(streams):
    current, side = streams
    with side:
        x = torch.empty(1000, device=DEV)
    side.synchronize()
    address = x.data_ptr()
    del x
    y = torch.empty(1000, device=DEV)  # on the current stream: another pool
    assert y.data_ptr() != address
    with side:
        z = torch.empty(1000, device=DEV)
    assert z.data_ptr() == address


def test_events_measure_only_their_own_stream(streams):
    current, side = streams
    times = {}
    for name, timed in (("current", current), ("side", side)):
        start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
        start.record(timed)
        with side:
            torch.sim._sleep(15_000_000)  # 10 ms of the virtual clock
        end.record(timed)
        end.synchronize()
        times[name] = start.elapsed_time(end)
    assert times["current"] < 1.0 and times["side"] >= 10.0


def test_a_streams_context_makes_its_device_current_and_restores_it():
    before = torch.accelerator.current_device_index()
    other = 1 - before
    with torch.Stream(f"sim:{other}") as s:
        assert torch.accelerator.current_device_index() == other
        assert torch.accelerator.current_stream(f"sim:{other}") == s
    assert torch.accelerator.current_device_index() == before
    with torch.sim.stream(torch.sim.Stream(other)):
        assert torch.accelerator.current_device_index() == other
    assert torch.accelerator.current_device_index() == before


def test_record_stream_refuses_a_stream_of_another_kind():
    x = torch.ones(2, device=DEV)
    with pytest.raises(TypeError, match="expected a stream of the sim device"):
        x.record_stream(torch.Stream("cpu"))


def test_the_allocator_counts_no_block_twice(streams):
    current, side = streams
    torch.sim.synchronize(0)
    start = allocators[0].allocated
    for record in (False, True):
        out, _ = reuse_after_free(current, side, record=record)
        del out
    torch.sim.synchronize(0)
    torch.empty(1, device=DEV)
    assert allocators[0].allocated <= start + 2 * 512 + 512
    assert gs.is_installed()


def test_waits_are_transitive(streams, rec):
    current, side = streams
    x = side_write(current, side)
    third = torch.Stream(DEV)
    third.wait_stream(side)  # third is ordered after the side stream's write...
    current.wait_event(third.record_event())  # ...and the current stream after third
    assert read_on_current(x) == 64.0 and not rec.stream_races
