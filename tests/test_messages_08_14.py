"""Messages that blamed the wrong thing (issue 27), chapters 8 to 14: each learner file that got one is graded on
the simulated legs, where every one of them shows, and its messages must now name the real cause and no longer
the old one. (tests/test_course.py checks the phrase each wrong submission expects on every leg; this file
checks that the false explanation is gone.)"""

import pytest

from grader import ROOT, simulated
from grader.engine import runner
from grader.catalog import course

pytestmark = pytest.mark.skipif(not simulated.is_supported(), reason="the simulated accelerator needs torch >= 2.5")

# (exercise, submission, what the message must say, what it must no longer say)
CASES = [
    ("last_token", "wrong_device_type_only", "means the current device, not hidden's", "made on cpu"),
    ("model_device", "wrong_index_zero", "the index is not the model's", "means the current device: keep the index"),
    ("load_checkpoint", "wrong_map_to_device_type", "torch.load was given a map_location",
     "pass map_location to torch.load"),
    ("load_checkpoint", "wrong_map_dict_missing_device", "a dict maps only the devices it names",
     "pass map_location to torch.load"),
    ("float64_on_mps", "wrong_torch_tensor_keeps_float64", "torch.tensor, torch.as_tensor) keeps NumPy's dtype",
     "torch.from_numpy keeps"),
    ("train_anywhere", "wrong_model_to_device_type", "a device without its index", "such as model.to('cuda')"),
    ("find_misplaced", "wrong_top_level_type_only", "cannot tell them apart", "recursively"),
    ("time_matmul", "wrong_cuda_sync_message", "torch.cuda.synchronize() waits for nothing", None),
    ("per_class_accuracy", "wrong_cuda_sync_message", "torch.cuda.synchronize() waits for nothing", None),
    ("train_anywhere", "wrong_nonblocking_epoch_read", "non_blocking copy to the CPU that nothing waited for", "the fix changed the result"),
    ("log_every", "wrong_nonblocking_no_sync", "non_blocking=True gives when it is read before", None),
]


@pytest.mark.parametrize("exercise, submission, says, no_longer", CASES, ids=[f"{e}/{s}" for e, s, *_ in CASES])
def test_the_message_names_the_real_cause(exercise, submission, says, no_longer):
    grade = runner.grade(course.get(exercise), ROOT / "tests" / "submissions" / exercise / f"{submission}.py",
                         device="sim")
    messages = [r.message for r in grade.failures]
    assert messages, f"{exercise}/{submission} passes on the simulated legs"
    assert any(says in m for m in messages), messages
    if no_longer:
        assert not any(no_longer in m for m in messages), messages
