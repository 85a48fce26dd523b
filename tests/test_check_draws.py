"""What the hidden checks draw: the properties their comments promise, over many seeded draws (a weaker draw
passes more wrong submissions without any single grading showing it)."""

import importlib.util
import random

import torch

from grader import course


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
