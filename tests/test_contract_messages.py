"""The messages of chapters 1-4's graders say what the learner's code did (issue 27): each test grades a real
submission from tests/submissions/ on the simulated devices and reads the messages it gets."""

import pytest

from grader import ROOT, course, runner, simulated

SUBMISSIONS = ROOT / "tests" / "submissions"

pytestmark = pytest.mark.skipif(not simulated.is_supported(), reason="needs the simulated accelerator")


def messages_on(exercise: str, submission: str, leg: str) -> list[str]:
    grade = runner.grade(course.get(exercise), SUBMISSIONS / exercise / submission, device="sim")
    found = [r.message for r in grade.failures if r.leg == leg]
    assert found, f"{exercise}/{submission} should fail on {leg}"
    return found


def test_a_helper_made_on_the_current_device_is_not_said_to_be_made_on_the_cpu():
    # positions = torch.arange(T, device=x.device.type): made on sim:0, the current device, beside x on sim:1
    found = messages_on("masked_mean", "wrong_type_only_device.py", "sim:1")
    assert not any("created on cpu" in m for m in found), found
    assert any("a helper tensor is on sim:0 while the input is on sim:1" in m for m in found), found


def test_class_weights_on_the_current_accelerator_are_not_said_to_be_on_the_cpu():
    # criterion.to(torch.accelerator.current_accelerator()): the weights on sim:0, the model on sim:1
    found = messages_on("weighted_loss", "wrong_current_accelerator.py", "sim:1")
    assert not any("weights are on cpu" in m for m in found), found
    assert any("the loss's class weights are on sim:0 while the model and the batches are on sim:1" in m
               for m in found), found


def test_the_shipped_mask_is_still_said_to_be_made_on_the_cpu():
    exercise = course.get("masked_mean")
    grade = runner.grade(exercise, exercise.exercise_file, device="sim")
    assert all("the mask is created on cpu while the input is on" in r.message for r in grade.failures), [
        r.message for r in grade.failures]


def test_a_wrong_optimizer_is_not_blamed_on_the_returned_loss():
    # Nesterov momentum trains other parameters, so each loss train_step returns differs too: the message names
    # the parameters, the cause, not the return value.
    found = messages_on("stale_optimizer", "wrong_nesterov.py", "sim:0")
    assert not any("train_step returned" in m for m in found), found
    assert any("after 3 steps of SGD" in m for m in found), found
