"""Grader for weighted_loss: the class-weighted loss is computed on the model's device, with the right weights,
and nothing goes back and forth. Class counts, model and batches are drawn fresh each run; the reference is
torch.nn.functional.cross_entropy with the weights computed here, on the CPU."""

import torch
import torch.nn.functional as F
from torch import nn

from grader.expect import expect_close, expect_device, fail, no_round_trips, running

EXPLAIN = ("the loss's class weights are on cpu while the model and the batches are on {device}: "
           "move the loss to the model's device (criterion.to(device)), as you would a model.")


def setup(device):
    classes, features = int(torch.randint(3, 7, ())), int(torch.randint(4, 10, ()))
    counts = [int(c) for c in torch.randint(5, 500, (classes,))]
    cpu_model = nn.Sequential(nn.Linear(features, 12), nn.Tanh(), nn.Linear(12, classes))
    model = nn.Sequential(nn.Linear(features, 12), nn.Tanh(), nn.Linear(12, classes))
    model.load_state_dict(cpu_model.state_dict())
    model.to(device)
    batches = []
    for _ in range(int(torch.randint(2, 5, ()))):
        B = int(torch.randint(6, 16, ()))
        batches.append((torch.randn(B, features), torch.randint(0, classes, (B,))))
    counts_t = torch.tensor(counts, dtype=torch.float64)
    weight = (counts_t.sum() / (classes * counts_t)).float()
    with torch.no_grad():
        expected = torch.stack([F.cross_entropy(cpu_model(x), y, weight=weight) for x, y in batches]).mean()
    on_device = [(x.to(device), y.to(device)) for x, y in batches]
    return model, on_device, counts, expected


def run(submission, model, batches, counts, device):
    with running(f"evaluate_loss(model, batches, class_counts) with the model and batches on {device}", submission,
                 explain_device_error=EXPLAIN.format(device=device)):
        return submission.evaluate_loss(model, batches, counts)


def test_loss_on_the_models_device(submission, device):
    model, batches, counts, _ = setup(device)
    loss = run(submission, model, batches, counts, device)
    expect_device(loss, device, "the loss returned by evaluate_loss",
                  "keep the loss on the model's device: move the criterion there, not the logits to the CPU.")
    moved = sorted({str(p.device) for p in model.parameters() if p.device != next(iter(batches))[0].device})
    if moved:
        fail(f"evaluate_loss moved the model to {', '.join(moved)}: move the loss's weights to the model instead.")


def test_loss_is_the_weighted_cross_entropy(submission, device):
    model, batches, counts, expected = setup(device)
    loss = run(submission, model, batches, counts, device)
    expect_close(loss.reshape(()) if hasattr(loss, "reshape") else loss, expected,
                 f"the weighted loss for class counts {counts}", atol=1e-5)


def test_no_round_trips(submission, device):
    model, batches, counts, _ = setup(device)
    with no_round_trips(device, "evaluate_loss"):
        run(submission, model, batches, counts, device)
