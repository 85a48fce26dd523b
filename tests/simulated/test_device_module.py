"""``torch.sim`` (grader/simulated/device_module.py) function by function, value by value, as torch.cuda answers
them on a machine with two GPUs. (Written for the mutation report, issue 31: the behavioural tests use these
functions; here each answer is checked exactly.) The simulator is process-wide: each test puts back what it
changes."""

import contextlib

import pytest
import torch

from grader.simulated import config, generators
from grader.simulated.tensor import allocators

sim = torch.sim
MiB = 2**20


@contextlib.contextmanager
def current(idx):
    before = config.CURRENT[0]
    config.CURRENT[0] = idx
    try:
        yield
    finally:
        config.CURRENT[0] = before


@pytest.fixture(autouse=True)
def device_0_current():
    """Each test starts with sim:0 current, as a fresh process does, whatever another test of this process left."""
    with current(0):
        yield


def test_the_device_context_makes_a_device_current_and_puts_the_previous_one_back():
    assert sim.current_device() == 0
    with sim.device(1):
        assert sim.current_device() == 1
        with sim.device("sim:0"):
            assert sim.current_device() == 0
        assert sim.current_device() == 1
        with sim.device(None), sim.device(-1), sim.device("sim"):  # no device, and the current one: no change
            assert sim.current_device() == 1
    assert sim.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        with sim.device(2):
            pass
    assert sim.current_device() == 0
    with pytest.raises(ZeroDivisionError):
        with sim.device(1):
            1 / 0
    assert sim.current_device() == 0  # put back after an exception, which is not swallowed
    with sim.device_of(torch.ones(1, device="sim:1")):
        assert sim.current_device() == 1
        with sim.device_of(torch.ones(1)):  # a CPU tensor changes nothing
            assert sim.current_device() == 1
    assert sim.current_device() == 0
    with sim.device_of(torch.ones(1)):  # on sim:0 too
        assert sim.current_device() == 0


def test_devices_are_two_usable_cuda_like_gpus():
    assert (sim.is_available(), sim.is_initialized(), sim._is_in_bad_fork(), sim.device_count()) == (True, True, False, 2)
    assert sim.init() is None and sim._lazy_init() is None
    assert sim.get_device_name() == sim.get_device_name(1) == "Simulated accelerator (cuda profile)"
    assert sim.get_device_capability(0) == (9, 0)
    assert sim.get_amp_supported_dtype() == [torch.float16, torch.bfloat16] and sim.is_bf16_supported()
    assert sim.is_bf16_supported(including_emulation=False) is True
    assert sim.can_device_access_peer(0, 1) is True
    for bad in ((0, 2), (2, 0)):
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            sim.can_device_access_peer(*bad)
    assert sim.OutOfMemoryError is torch.OutOfMemoryError and sim.Generator is generators.SimGenerator


def test_set_device_changes_the_current_device_and_refuses_a_missing_one():
    with current(0):
        sim.set_device(1)
        assert sim.current_device() == 1
        sim.set_device(-1)  # as torch.cuda.set_device: a negative index is ignored
        assert sim.current_device() == 1
        sim.set_device("sim:0")
        assert sim.current_device() == 0
        with pytest.raises(RuntimeError, match="invalid device ordinal") as e:
            sim.set_device(2)
        assert "install(count=2) provides 2 device(s)" in str(e.value)
        assert sim.current_device() == 0


def test_device_properties():
    p = sim.get_device_properties(1)
    assert (p.name, p.major, p.minor, p.multi_processor_count, p.index) == (
        "Simulated accelerator (cuda profile)", 9, 0, 132, 1)
    assert p.total_memory == allocators[1].capacity
    assert p.uuid == "00000000-0000-0000-0000-000000000001"
    assert repr(p) == ("_SimDeviceProperties(name='Simulated accelerator (cuda profile)', major=9, minor=0, "
                       f"total_memory={allocators[1].capacity // MiB}MB, multi_processor_count=132)")
    with current(1):
        assert sim.get_device_properties().index == 1
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        sim.get_device_properties(2)


@pytest.fixture
def rng_kept():
    states = [g.get_state() for g in generators.defaults]
    seeds = [g.initial_seed() for g in generators.defaults]
    yield
    for g, seed, state in zip(generators.defaults, seeds, states):
        g.manual_seed(seed)
        g.set_state(state)


def test_seeds_are_per_device_as_cudas(rng_kept):
    d0, d1 = generators.defaults
    sim.manual_seed_all(5)
    assert (d0.initial_seed(), d1.initial_seed()) == (5, 5)
    with current(1):
        sim.manual_seed(7.0)  # the current device's generator only
        assert sim.initial_seed() == 7
    assert (d0.initial_seed(), d1.initial_seed(), sim.initial_seed()) == (5, 7, 5)
    with current(1):
        sim.seed()
        assert d1.initial_seed() != 7 and d0.initial_seed() == 5
        sim.seed_all()
        assert d0.initial_seed() == d1.initial_seed() != 5
    assert sim.default_generator(1) is d1 and sim.default_generator() is d0


def test_rng_states_are_per_device(rng_kept):
    sim.manual_seed_all(1)
    first = sim.get_rng_state_all()
    assert len(first) == 2 and all(torch.equal(a, b) for a, b in zip(first, [sim.get_rng_state(0), sim.get_rng_state(1)]))
    a = torch.rand(3, device="sim:1").cpu()
    assert torch.equal(sim.get_rng_state(0), first[0]) and not torch.equal(sim.get_rng_state("sim:1"), first[1])
    sim.set_rng_state(first[1], "sim:1")
    assert torch.equal(torch.rand(3, device="sim:1").cpu(), a)
    torch.rand(3, device="sim:0")
    sim.set_rng_state_all(first)
    assert all(torch.equal(s, f) for s, f in zip(sim.get_rng_state_all(), first))
    with current(1):
        assert torch.equal(sim.get_rng_state(), first[1])
        sim.set_rng_state(first[0])
        assert torch.equal(generators.defaults[1].get_state(), first[0])


def test_sync_debug_mode_by_name_or_number():
    try:
        for name, number in (("warn", 1), ("error", 2), ("default", 0)):
            sim.set_sync_debug_mode(name)
            assert sim.get_sync_debug_mode() == number
        sim.set_sync_debug_mode(1.0)
        assert sim.get_sync_debug_mode() == 1 and isinstance(sim.get_sync_debug_mode(), int)
        with pytest.raises(RuntimeError, match="^invalid value of debug_mode, expected one of `default`, `warn`, "
                                               "`error`$"):
            sim.set_sync_debug_mode("loud")
        assert sim.get_sync_debug_mode() == 1
    finally:
        sim.set_sync_debug_mode(0)


def test_sleep_spins_its_cycles_on_the_current_device():
    sim.synchronize(0), sim.synchronize(1)
    with current(1):
        before = sim.device_time(1)
        sim._sleep(3_000_000)  # 2 ms at 1.5 GHz, on sim:1
        assert sim.device_time() == pytest.approx(max(before, sim.host_time()) + 2.0, rel=1e-9)
    assert sim.device_time(0) < sim.device_time(1)
    sim.synchronize(1)
    assert sim.host_time() >= sim.device_time(1)


def test_streams_of_each_device():
    s1 = sim.Stream(device=1)
    assert sim.current_stream(1) == sim.default_stream("sim:1") and sim.current_stream(1).device_index == 1
    assert sim.default_stream().device_index == 0
    with sim.stream(s1):
        assert sim.current_stream(1) == s1 and sim.current_stream(0) == sim.default_stream(0)
    sim.set_stream(s1)
    try:
        assert sim.current_stream(1) == s1
    finally:
        sim.set_stream(sim.default_stream(1))
    assert sim.current_stream(1) == sim.default_stream(1)
    assert sim.Event is type(s1.record_event())


def test_memory_counters_are_per_device():
    a = allocators[1]
    sim.empty_cache()
    x = torch.empty(MiB, dtype=torch.uint8, device="sim:1")
    assert sim.memory_allocated(1) == a.allocated >= MiB and sim.memory_allocated("sim:1") == a.allocated
    assert sim.memory_reserved(1) == a.reserved >= sim.memory_allocated(1)
    with current(1):
        assert sim.memory_allocated() == a.allocated and sim.max_memory_allocated() == a.peak
    assert sim.max_memory_allocated(1) == a.peak >= MiB and sim.max_memory_reserved(1) == a.peak_reserved
    stats = sim.memory_stats(1)
    assert stats["allocated_bytes.all.current"] == a.allocated and stats == a.flat_stats()
    assert sim.mem_get_info(1) == a.mem_get_info()
    del x
    sim.reset_peak_memory_stats(1)
    assert sim.max_memory_allocated(1) == a.allocated and sim.max_memory_reserved(1) == a.reserved
    y = torch.empty(MiB, dtype=torch.uint8, device="sim:1")
    del y
    assert sim.max_memory_allocated(1) > a.allocated
    sim.reset_max_memory_allocated(1)
    assert sim.max_memory_allocated(1) == a.allocated
    sim.reset_accumulated_memory_stats(1)
    assert sim.memory_stats(1)["allocation.all.allocated"] == 0


def test_empty_cache_releases_the_current_devices_cache_only():
    for i in (0, 1):
        with current(i):
            sim.empty_cache()  # only segments with a live block stay: 32 MiB fits in none of their free ends
    x0, x1 = (torch.empty(32 * MiB, dtype=torch.uint8, device=f"sim:{i}") for i in (0, 1))
    del x0, x1
    cached = allocators[1].reserved
    assert entirely_free_segments(allocators[1]) and entirely_free_segments(allocators[0])
    sim.empty_cache()  # current device: sim:0
    assert allocators[1].reserved == cached and not entirely_free_segments(allocators[0])
    with current(1):
        sim.empty_cache()
    assert not entirely_free_segments(allocators[1])


def entirely_free_segments(allocator) -> list:
    """What empty_cache gives back, as CUDA's does: segments with no block in use (a segment that holds a live
    tensor of another test stays)."""
    return [first for first in allocator.segments if not first.allocated and first.next is None]


def test_memory_summary_text():
    a = allocators[1]
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="sim:1")
    text = sim.memory_summary(1)
    assert text == (
        "simulated sim memory summary, device ID 1\n"
        f"  allocated: {a.allocated / MiB:.1f} MiB (peak {a.peak / MiB:.1f} MiB)\n"
        f"  reserved:  {a.reserved / MiB:.1f} MiB (peak {a.peak_reserved / MiB:.1f} MiB)\n"
        f"  segments:  {len(a.segments)}, retries: {a.num_alloc_retries}, OOMs: {a.num_ooms}\n")
    assert f"allocated: {a.allocated / MiB:.1f} MiB" in text and a.allocated >= 64 * MiB
    del x
    with current(1):
        assert sim.memory_summary().startswith("simulated sim memory summary, device ID 1\n")


def test_the_memory_fraction_limits_what_the_process_may_reserve():
    a = allocators[1]
    a.allowed, other = None, allocators[0].allowed  # as a fresh process has it (another test may have set 1.0)
    try:
        for bad, error, text in (("half", TypeError, "Invalid type for fraction argument, must be `float`"),
                                 (-0.1, ValueError, "Invalid fraction value: -0.1. Allowed range: 0~1"),
                                 (1.5, ValueError, "Invalid fraction value: 1.5. Allowed range: 0~1")):
            with pytest.raises(error) as e:
                sim.set_per_process_memory_fraction(bad, 1)
            assert str(e.value) == text
        assert sim.get_per_process_memory_fraction(1) == 1.0 and a.allowed is None
        sim.set_per_process_memory_fraction(0.25, 1)
        assert a.allowed == int(0.25 * a.capacity) and sim.get_per_process_memory_fraction(1) == 0.25
        sim.set_per_process_memory_fraction(1, 1)
        sim.set_per_process_memory_fraction(0, 1)  # the bounds are allowed
        assert a.allowed == 0 and sim.get_per_process_memory_fraction(1) == 0.0
        assert allocators[0].allowed == other  # device 0 untouched
    finally:
        a.allowed = None


def test_memory_capacity_of_one_device_or_all():
    before = [a.capacity for a in allocators]
    try:
        sim.set_memory_capacity("1GiB", 1)
        assert [a.capacity for a in allocators] == [before[0], 2**30]
        assert sim.get_device_properties(1).total_memory == 2**30
        sim.set_memory_capacity(2**31)
        assert [a.capacity for a in allocators] == [2**31, 2**31]
    finally:
        for a, c in zip(allocators, before):
            a.capacity = c


def test_an_mps_profile_reports_no_cuda_capability(monkeypatch):
    monkeypatch.setattr(config, "PROFILE", "mps")
    p = sim.get_device_properties(0)
    assert (p.major, p.minor, p.name) == (0, 0, "Simulated accelerator (mps profile)")
    assert sim.get_device_capability() == (0, 0) and sim.get_device_name() == "Simulated accelerator (mps profile)"


def test_where_no_device_is_usable_there_are_none():
    import grader.simulated as gs

    with gs.unusable():  # a CUDA wheel on a machine without a GPU
        assert (sim.is_available(), sim.device_count()) == (False, 0)
    assert (sim.is_available(), sim.device_count()) == (True, 2)
