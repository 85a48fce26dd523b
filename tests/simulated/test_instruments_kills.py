"""The instruments' decisions that the end-to-end counts (tests/test_instruments.py) do not reach: the survivors of
a sampled mutation run of grader/engine/instruments.py (issue 31, twenty-first session; benchmarks/results/mutation.md).
The simulated device is installed in this process (conftest.py), so each measure() runs here."""

from __future__ import annotations

import io
import threading
import types

import pytest
import torch

from grader.engine import instruments
from grader.engine.instruments import measure, statistics_kept

S0, S1 = torch.device("sim:0"), torch.device("sim:1")


def _on_a_new_thread(work):
    """Run `work` on a thread that has never counted anything (no depth kept on it yet), and return its result."""
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", work()))
    thread.start()
    thread.join()
    return out["value"]


def test_a_wait_on_a_fresh_thread_counts_before_and_after_the_graders_own_calls():
    # The depth that tells the grader's own waits from the learner's starts at 0 on every thread, and is back at
    # 0 after a wrapped call (torch.tensor of a list, which waits inside as any copy in does)
    def work():
        with measure(S0) as m:
            torch.sim.current_stream(0).synchronize()
            torch.tensor([1.0, 2.0], device=S0)
            torch.sim.current_stream(0).synchronize()
        return m.explicit_syncs

    assert _on_a_new_thread(work) == 2


def test_waits_and_prints_on_another_thread_are_not_the_measured_threads():
    x = torch.ones(3, device=S0)
    with measure(S0) as m:
        _on_a_new_thread(lambda: (torch.sim.current_stream(0).synchronize(), str(x)))
    assert (m.explicit_syncs, m.printed, m.host_reads) == (0, 0, 0)


def test_a_copy_between_devices_is_blocking_and_converts_nothing_on_the_way():
    x = torch.ones(8, device=S0)
    with measure(S0) as m:
        x.to(S1)
        x.to(S1, torch.float16)
    assert [c.blocking for c in m.d2d] == [True, True]
    assert [(c.dtype, c.converted_on) for c in m.d2d] == [(torch.float32, None), (torch.float16, None)]


def test_copy_without_non_blocking_is_blocking():
    dst, src = torch.empty(2), torch.ones(2)
    assert instruments.non_blocking(False, (dst, src), {}) is False
    assert instruments.non_blocking(False, (dst, src, True), {}) is True
    assert instruments.non_blocking(True, (src,), {"non_blocking": True}) is True


@pytest.mark.parametrize("kind, converted_on", [("h2d", "cpu"), ("d2h", "device")])
def test_mps_converts_on_the_cpu_going_in_and_on_the_device_coming_back(kind, converted_on):
    # copy_to_mps_ converts on the CPU first, copy_from_mps_ casts into the host's destination: the destination's
    # dtype crosses either way (no MPS here: the copy's two ends stand in for tensors)
    mps, cpu = torch.device("mps"), torch.device("cpu")
    src = types.SimpleNamespace(dtype=torch.float32, device=cpu if kind == "h2d" else mps)
    dst = types.SimpleNamespace(dtype=torch.float16, device=mps if kind == "h2d" else cpu)
    assert instruments._crossing(kind, src, dst, True, {}, ()) == (torch.float16, converted_on)


def test_torch_save_of_a_device_tensor_is_a_copy_to_the_host_however_deep_it_is_kept():
    x = torch.ones(4, device=S0)
    nested = x
    for _ in range(6):  # as deep as the count looks
        nested = [nested]
    with measure(S0) as m:
        torch.save({"state": x}, io.BytesIO())
        torch.save(nested, io.BytesIO())
    assert [(c.src, c.dst, c.nbytes) for c in m.d2h] == [("sim:0", "cpu", 16), ("sim:0", "cpu", 16)]


def test_while_learner_code_runs_the_memory_statistics_cannot_be_started_again():
    x = torch.ones(1 << 16, device=S0)
    peak = torch.sim.max_memory_allocated(S0)
    del x
    with statistics_kept(S0):
        torch.sim.reset_peak_memory_stats(S0)
        torch.accelerator.reset_peak_memory_stats(S0)
    assert torch.sim.max_memory_allocated(S0) == peak
    torch.sim.reset_peak_memory_stats(S0)  # outside, a reset works again
    assert torch.sim.max_memory_allocated(S0) < peak


def test_a_reset_whose_peak_cannot_be_read_still_resets():
    # Keeping the peak before a reset must never change what the learner's reset does
    resets = []

    def unreadable(device=None):
        raise RuntimeError("no statistics here")

    mod = types.SimpleNamespace(max_memory_allocated=unreadable,
                                reset_peak_memory_stats=lambda device=None: resets.append(device),
                                reset_max_memory_allocated=lambda device=None: resets.append(device))
    peaks = []
    with instruments._keeping_peaks(mod, S0, peaks):
        mod.reset_peak_memory_stats(S0)
    assert resets == [S0] and peaks == []
