"""time_matmul's verdict on a simulated leg comes from virtual time only: with every product made to take long in
real time (a slow or loaded machine), each submission keeps its verdict, and its messages, word for word.

The check's two tests are called in this process on sim:0 and sim:1, with the submission's function, as the grading
worker calls them. The slowing sleeps inside each product's launch: with the former real-time device (4 ms a product)
it made a launch timed by os.times() look as long as a product, and wrong_unwatched_clock_os_times passed."""

import importlib.util
import random
import time
from pathlib import Path

import pytest
import torch

from grader.engine import expect
from grader.simulated import clock

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ROOT / "tests" / "submissions" / "time_matmul"
# Those whose number could follow the machine's clock: read by clocks no grader wraps, or by watched clocks
# around the products; and a right one by clocks and one by events.
NAMES = ["wrong_unwatched_clock_os_times", "wrong_unwatched_clock_in_a_watched_bracket",
         "wrong_unwatched_clock_decoy_reads", "wrong_total_not_mean", "wrong_sync_at_end_only",
         "right_accelerator_sync_ns", "right_imported_clock", "right_events"]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", autouse=True)
def _clock_back_to_zero():
    """After days of virtual time the clock's values are so large that the other tests' exact sums round."""
    yield
    torch.accelerator.synchronize(0), torch.accelerator.synchronize(1)
    clock.clock.reset(len(clock.clock.device))


@pytest.fixture(scope="module")
def check():
    return _load(ROOT / "grader" / "checks" / "08_async" / "test_time_matmul.py", "time_matmul_check")


class Learner:
    """What the check reads of a submission: its file's name and its function."""

    def __init__(self, path: Path):
        self.filename = str(path)
        self.time_matmul = _load(path, f"submission_{path.stem}").time_matmul


def verdict(check, learner, device) -> list[str]:
    """Each check's outcome ("pass" or its message), and the number the function returned, with the same draws
    of matrix size and repeats each time."""
    random.seed(7)
    expect.LEG[0] = device
    outcomes = []
    try:
        for test in (check.test_clock_is_read_with_the_device_idle, check.test_the_products_are_what_is_timed):
            try:
                test(learner, device)
                outcomes.append("pass")
            except expect.GradeFailure as exc:
                outcomes.append(str(exc))
    finally:
        expect.LEG[0] = None
    return outcomes


@pytest.fixture
def slow_products(monkeypatch):
    """Every product (a kernel at the check's cost) takes 20 ms more of real time to launch."""
    launch = clock.launch

    def slow(idx, cost=None, name=None):
        if cost is None and clock.kernel_cost.kernel_us is not None:
            time.sleep(0.02)
        return launch(idx, cost, name)

    monkeypatch.setattr(clock, "launch", slow)


@pytest.fixture(scope="module")
def at_speed(check):
    learners = {name: Learner(SUBMISSIONS / f"{name}.py") for name in NAMES}
    return learners, {(name, d): verdict(check, learners[name], torch.device(d))
                      for name in NAMES for d in ("sim:0", "sim:1")}


def test_a_slow_machine_changes_no_verdict_and_no_message(check, at_speed, slow_products):
    learners, fast = at_speed
    for name in NAMES:
        phrase = (SUBMISSIONS / f"{name}.py").read_text().splitlines()[0].removeprefix("# expect: ")
        for d in ("sim:0", "sim:1"):
            outcomes = fast[name, d]
            if name.startswith("right_"):
                assert outcomes == ["pass", "pass"], (name, d, outcomes)
            else:
                assert any(phrase in o for o in outcomes), (name, d, outcomes)
            slowed = verdict(check, learners[name], torch.device(d))
            if "unwatched" in name:  # the number is the machine's clock, in the message: same verdicts
                assert [o == "pass" for o in slowed] == [o == "pass" for o in outcomes], (name, d, slowed)
                assert any(phrase in o for o in slowed), (name, d, slowed)
            else:  # every reading is virtual: the same words and numbers
                assert slowed == outcomes, (name, d)


def test_the_learners_clocks_read_virtual_time_on_a_simulated_leg(check):
    # One product costs PRODUCT_US of virtual time: a right timing by perf_counter_ns returns exactly that
    learner = Learner(SUBMISSIONS / "right_accelerator_sync_ns.py")
    random.seed(7)
    expect.LEG[0] = device = torch.device("sim:1")
    try:
        result, reads, *_ = check.run(learner, device)
    finally:
        expect.LEG[0] = None
    assert result == pytest.approx(check.PRODUCT_US / 1e6, rel=1e-9)
    assert [name for *_, name, _ in reads] == ["perf_counter_ns", "perf_counter_ns"]
    assert all(was_idle for was_idle, *_ in reads)
