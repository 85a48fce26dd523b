"""The messages of chapters 1-4's graders say what the learner's code did (issue 27): each test grades a real
submission from tests/submissions/ on the simulated devices and reads the messages it gets."""

import pytest

from grader import ROOT, simulated
from grader.engine import runner
from grader.catalog import course

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


def test_a_model_on_the_wrong_index_is_not_blamed_on_a_list_of_names():
    # pick_device() pins index 0, wrong on sim:0 (where sim:1 is current): the kind is right, so the message is
    # about the index, not about comparing the accelerator with a list of names
    found = messages_on("pick_device", "wrong_pinned_index_zero.py", "sim:0")
    assert not any("list of names" in m for m in found), found
    assert any("build_model() put the model's parameters on sim:0" in m and "the index is not" in m
               for m in found), found


def test_a_device_given_by_its_name_is_shown_as_such():
    found = messages_on("noise_batch", "wrong_device_attribute.py", "sim:1")
    assert any("make_noise_batch(4, 3, 'sim:1') raised AttributeError" in m for m in found), found


def test_a_model_moved_to_the_cpu_and_back_is_named_as_the_cause():
    # model.to("cpu") for the loop, model.to(device) after it: the batches were never moved, by design
    found = messages_on("eval_loop", "wrong_model_to_cpu.py", "sim:1")
    assert not any("returns a new tensor" in m for m in found), found
    assert any("evaluate moved the model to cpu" in m for m in found), found


def test_a_model_never_called_is_not_said_to_get_cpu_batches():
    found = messages_on("eval_loop", "wrong_nan.py", "sim:0")
    assert not any("still on cpu" in m for m in found), found
    assert any("the model was called 0 times for" in m for m in found), found


def test_one_packed_copy_is_not_told_that_two_copies_are_enough():
    # images and targets packed into one float32 tensor: one copy, of the wrong dtype
    found = messages_on("prepare_batch", "wrong_one_packed_copy.py", "sim:0")
    assert not any("1 copies where two" in m for m in found), found
    assert any("copy each tensor on its own, in its smaller dtype" in m for m in found), found


def test_labels_read_before_their_copy_arrived_are_named_as_such():
    # .to("cpu", non_blocking=True) on the result: the simulated device runs behind the host, so the labels
    # are read before they arrive; the message says so rather than "wrong classes"
    found = messages_on("predict_labels", "wrong_nonblocking_result.py", "sim:0")
    assert not any("keep the model and the argmax" in m for m in found), found
    assert any("predict returned its labels before they had arrived" in m for m in found), found


def test_a_model_moved_to_the_batch_and_back_is_named_as_the_cause():
    found = messages_on("predict_labels", "wrong_model_round_trip.py", "sim:1")
    assert any("predict moved the model from sim:1 to cpu" in m for m in found), found


def test_a_table_on_the_current_accelerator_is_not_said_to_stay_on_the_cpu():
    found = messages_on("positional_encoding", "wrong_table_on_default_accelerator.py", "sim:1")
    assert not any("stayed on cpu" in m for m in found), found
    assert any("AddPositions.table is on sim:0, not on sim:1" in m for m in found), found


def test_a_mask_dropped_from_state_dict_by_hand_is_explained():
    found = messages_on("saved_mask", "wrong_drop_from_state_dict.py", "sim:0")
    assert any("It still expects every persistent buffer" in m for m in found), found
