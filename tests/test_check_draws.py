"""The hidden checks' own helpers, called directly: what they draw (the properties their comments promise, over
many seeded draws: a weaker draw passes more wrong submissions without any single grading showing it), and what
their messages name where a result is wrong in more than one place."""

import importlib.util
import random

import pytest
import torch

from grader.catalog import course


def _check_module(exercise: str):
    spec = importlib.util.spec_from_file_location("check_under_test", course.get(exercise).grader_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_evaluate_dataset_always_ends_on_a_short_last_batch_of_at_least_16():
    # A loop that drops or mishandles the short last batch must meet one in every grading
    check = _check_module("evaluate_dataset")
    random.seed(0)
    torch.manual_seed(0)
    for _ in range(200):
        dataset, *_ = check.draw(torch.device("cpu"))
        assert 16 <= len(dataset) % check.BATCH, len(dataset)


def test_per_class_accuracy_draws_accuracies_that_tell_classes_apart():
    # one overall accuracy for every class, or 0.0 everywhere, must not match what the check expects
    check = _check_module("per_class_accuracy")
    random.seed(0)
    torch.manual_seed(0)
    for _ in range(50):
        _, labels, classes, expected = check.batch(torch.device("cpu"))
        present = [expected[c] for c in set(labels.tolist())]
        assert len(present) == classes - 1 and len(set(present)) > 1 and any(0 < a < 1 for a in present), expected


def test_per_class_accuracy_names_the_first_odd_value_and_the_first_absent_class():
    check = _check_module("per_class_accuracy")
    labels = torch.tensor([0, 0, 2, 2])  # classes 1 and 3 are absent

    def message(out):
        try:
            check.check_values(out, [1.0, 0.0, 1.0, 0.0], 4, labels)
        except BaseException as failed:  # the grader's fail() (pytest's Failed)
            return str(failed)
        return None

    said = message([torch.tensor(1.0), 0.0, 1.0, torch.tensor(0).numpy()])  # a 0-dim tensor, then a NumPy int
    assert "the list holds 0-dim tensors" in said, said
    said = message([torch.tensor(0).numpy(), 0.0, 1.0, torch.tensor(1.0)])
    assert "the list holds ndarray values" in said, said
    said = message([1.0, float("nan"), 1.0, float("nan")])
    assert "class 1 is absent from the batch, and per_class_accuracy gave nan for it" in said, said


def test_per_class_accuracy_tells_a_value_off_by_a_little_in_every_dtype():
    # each dtype's tolerance covers its rounding, not a wrong count: 1 of 20 samples of a class is 0.05
    check = _check_module("per_class_accuracy")
    labels, expected = torch.tensor([0, 0, 2, 2]), [0.5, 0.0, 0.75, 0.0]
    off = [0.55, 0.0, 0.75, 0.0]
    for tol in [*check.DTYPES.values(), None]:
        with pytest.raises(BaseException, match="but the accuracies are"):
            check.check_values(off, expected, 4, labels, **({} if tol is None else {"tol": tol}))
        check.check_values(expected, expected, 4, labels, **({} if tol is None else {"tol": tol}))
