"""Compare the simulator with the committed real-GPU fidelity table.

A case is compared first; only when it differs, and the difference is documented in
KNOWN_DIFFERENCES, is it an expected failure (strict: a documented difference that no longer
differs fails, so the entry must be removed)."""
import json
import os

import pytest

from tests.simulated import fidelity

TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "grader", "simulated",
                     "fidelity_cuda.json")

# Known, documented divergences (case name -> why). Keep in sync with grader/simulated/limits.py.
KNOWN_DIFFERENCES: dict[str, str] = {
    "to_sparse_csr of a device tensor @ device features":
        "LIMITS['sparse_layouts']: a CSR tensor cannot be made on sim (graders report it as a simulator limit)",
    "fft of 16 float16 values on the device": "LIMITS['half_fft']: refused before dispatch (a simulator limit)",
    "fft of 10 float16 values on the device": "LIMITS['half_fft']: refused before dispatch (a simulator limit)",
}

# Cases written without a GPU at hand (case name -> the answer PyTorch's source and documentation lead CUDA to
# give). test_every_case_was_recorded_on_cuda lets them through until the next GPU run records the table
# (tools/on_gpu.sh OUT fidelity; tools/GPU_RUNS.md), and test_no_recorded_case_is_still_pending fails once it has:
# remove the entry then, and the case is compared like any other (a difference goes to KNOWN_DIFFERENCES).
PENDING_GPU: dict[str, str] = {
    "a side stream's write read on the current stream without a wait": "[False]",
    "a side stream's write read on the current stream after wait_stream": "[True]",
    "a side stream's write read on the current stream after wait_event": "[True]",
    "a side stream's write read after synchronize() of the current stream only": "[False]",
    "a tensor freed while a side stream reads it: the next tensor of its stream gets the block": "[True, False]",
    "a tensor freed while a side stream reads it, after record_stream: other memory": "[False, True]",
    "events on the current stream around work on a side stream measure under 5 ms": "[True]",
    "events on the side stream around its work measure at least 15 ms": "[True]",
    "torch.Stream of :1 as a context makes :1 the current device, and restores :0": "[1, 0]",
    "backward of a forward run on a side stream runs on that side stream":
        "[True, [2.0, 2.0, 2.0, 2.0]]; the simulator answers False (LIMITS['backward_on_the_calling_stream'])",
    # building on meta (chapter "Building on meta"): the simulator's answers, read from PyTorch's source
    "Module.to(device) of a model built on meta": "the simulator's answer",
    "to_empty under deterministic algorithms leaves NaN": "the simulator's answer",
    "load_state_dict of device tensors into a meta model": "the simulator's answer",
    "load_state_dict(assign=True) of device tensors into a meta model": "the simulator's answer",
}


@pytest.fixture(scope="module")
def sim_rows():
    return {r["case"]: r for r in fidelity.run_all("sim")}


def test_sim_table_is_complete_and_renders(sim_rows):
    assert len(sim_rows) == len(fidelity.CASES)
    assert len({n for n, _, _ in fidelity.CASES}) == len(fidelity.CASES), "case names must be unique"
    md = fidelity.to_markdown(list(sim_rows.values()))
    assert md.count("\n") == len(fidelity.CASES) + 2
    assert fidelity.normalise("cuda:0 and cpu, torch.cuda.FloatTensor, wrapper_CUDA_mm, sim:1") == \
        "<dev>:0 and cpu, torch.<dev>.FloatTensor, wrapper_<dev>_mm, <dev>:1"


def test_every_case_runs_on_sim_without_internal_errors(sim_rows):
    # an error of these kinds is the simulator's own, unless CUDA raised it too (numpy() of a device tensor is
    # a TypeError there)
    on_cuda = {r["case"]: r.get("exc_type") for r in _cuda_rows()} if os.path.exists(TABLE) else {}
    bad = {n: r["message"] for n, r in sim_rows.items()
           if r.get("raised") and r["exc_type"] in ("NotImplementedError", "AttributeError", "TypeError",
                                                    "AssertionError", "KeyError")
           and on_cuda.get(n) != r["exc_type"] and n not in KNOWN_DIFFERENCES}
    assert not bad


def _cuda_rows():
    if not os.path.exists(TABLE):
        pytest.skip(f"{TABLE} missing: record it on a GPU machine with "
                    "`python -m tests.simulated.fidelity --device cuda --out <file>`")
    with open(TABLE) as f:
        return json.load(f)["rows"]


def _case_ids():
    if not os.path.exists(TABLE):
        return ["no-table"]
    with open(TABLE) as f:
        return [r["case"] for r in json.load(f)["rows"]]


def _same(sim, cuda):
    if (sim["raised"], sim["exc_type"]) != (cuda["raised"], cuda["exc_type"]):
        return False
    if cuda["raised"]:
        return fidelity.comparable(sim["message"]) == fidelity.comparable(cuda["message"])
    return sim["value"] == cuda["value"]


@pytest.mark.parametrize("name", _case_ids())
def test_matches_cuda(name, sim_rows):
    rows = {r["case"]: r for r in _cuda_rows()}
    cuda = rows[name]
    if "skipped" in cuda:
        pytest.skip(f"not recorded on CUDA: {cuda['skipped']}")
    if name not in sim_rows:
        pytest.fail(f"case {name!r} in the CUDA table is not in fidelity.CASES")
    sim = sim_rows[name]
    same = _same(sim, cuda)
    if name in KNOWN_DIFFERENCES:
        assert not same, f"{name!r} now matches CUDA: remove it from KNOWN_DIFFERENCES"
        pytest.xfail(KNOWN_DIFFERENCES[name])
    assert same, (sim, cuda)


def test_every_case_was_recorded_on_cuda():
    """A case written from PyTorch's source is a guess until a GPU has answered it: record the table again
    (tools/on_gpu.sh OUTDIR fidelity) after adding one."""
    recorded = set(_case_ids())
    pending = [n for n, _, _ in fidelity.CASES if n not in recorded and n not in PENDING_GPU]
    assert not pending, f"not yet recorded on CUDA: {pending}"


def test_no_recorded_case_is_still_pending():
    recorded = set(_case_ids())
    stale = [n for n in PENDING_GPU if n in recorded]
    assert not stale, f"recorded on CUDA now: remove them from PENDING_GPU: {stale}"
    names = {n for n, _, _ in fidelity.CASES}
    assert set(PENDING_GPU) <= names, f"PENDING_GPU names no case: {sorted(set(PENDING_GPU) - names)}"
