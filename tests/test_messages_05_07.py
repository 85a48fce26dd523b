"""Messages that blamed the wrong thing (issue 27), chapters 5 to 7: each learner file that got one is graded,
and its messages must now name the real cause and no longer the old one. (tests/test_course.py checks the
phrase each wrong submission expects; this file checks that the false explanation is gone, and where a message
names the learner's line, that it names the right one.)"""

import pytest

from grader import ROOT, simulated
from grader.engine import runner
from grader.catalog import course

pytestmark = pytest.mark.skipif(not simulated.is_supported(), reason="the simulated accelerator needs torch >= 2.5")


def messages(exercise: str, submission: str, device: str = "sim") -> list[str]:
    grade = runner.grade(course.get(exercise), ROOT / "tests" / "submissions" / exercise / f"{submission}.py",
                         device=device)
    return [r.message for r in grade.failures]


# (exercise, submission, the legs graded, what the message must say, what it must no longer say)
CASES = [
    # an in-place NumPy edit was blamed on torch.from_numpy and .to(); the line that writes is named
    ("standardize_features", "wrong_numpy_in_place", "sim", "`features -= features.mean(axis=0)`", "torch.from_numpy"),
    # torch.as_tensor shares the array too: named, with the in-place lines
    ("standardize_features", "wrong_as_tensor", "cpu", "torch.as_tensor share", None),
    # a non_blocking copy to the host read too early got only "wrong values (nan)"
    ("predict_proba", "wrong_nonblocking_no_sync", "sim", "non_blocking=True", "wrong values"),
    # a loader with spawned workers showed the worker's whole traceback through torch's and the grader's files
    ("gpu_in_workers", "wrong_spawn", "sim", "multiprocessing_context='spawn'", "Original Traceback"),
    ("gpu_in_workers", "wrong_spawn", "sim", "(line 17, in __getitem__: `x = self.images[i].to(self.device)`)",
     "grader/simulated"),
    # a lost index on a top-level entry got advice to recurse
    ("nested_batch", "wrong_hard_coded_index", "sim", "the right kind of device, another index", "must recurse"),
    # a tensor case that does not move got advice to recurse, though the helper recursed
    ("nested_batch", "wrong_nested_only", "sim", "returns the tensor where it was", "must recurse"),
    # labels converted on the way were told "not features and labels in order"
    ("pinned_loader", "wrong_labels_as_float", "sim", "without converting it", "in order"),
]


@pytest.mark.parametrize("exercise, submission, legs, says, no_longer", CASES,
                         ids=[f"{e}/{s}" for e, s, *_ in CASES])
def test_the_message_names_the_real_cause(exercise, submission, legs, says, no_longer):
    found = messages(exercise, submission, legs)
    assert found, f"{exercise}/{submission} passes on {legs}"
    assert any(says in m for m in found), found
    if no_longer:
        assert not any(no_longer in m for m in found), found


def test_no_message_on_the_cpu_leg_says_python_waits_for_the_cpu():
    # metric_round_trip said "wait until cpu has finished all the work queued" on the cpu leg, of a data-sized
    # result that costs no wait there; the accelerator legs still fail it, and say why
    assert not messages("metric_round_trip", "wrong_nonzero_count", device="cpu")
    assert any("each sizing its result by the data" in m for m in messages("metric_round_trip", "wrong_nonzero_count"))


def test_evaluate_dataset_counts_the_batches_it_names():
    # "N reads ... over K batches": one read a batch, so the two numbers are the same, a whole number of batches
    import re

    grade = runner.grade(course.get("evaluate_dataset"),
                         ROOT / "tests" / "submissions" / "evaluate_dataset" / "wrong_count_read_each_batch.py",
                         device="sim")
    said = [m for m in (r.message for r in grade.failures) if "batches" in m]
    assert said, [r.message for r in grade.failures]
    for message in said:
        reads, batches = re.search(r"(\d+) reads of a .* over (-?[\d.]+) batches", message).groups()
        assert reads == batches, message
