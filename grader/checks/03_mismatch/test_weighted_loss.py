"""Grader for weighted_loss: the class-weighted loss is computed on the model's device, with the right weights,
and nothing goes back and forth. Class counts, model and batches are drawn fresh each run; the reference is
torch.nn.functional.cross_entropy with the weights computed here, on the CPU. The model has dropout and comes in
training mode, as a training loop leaves it, so an evaluation that drops `model.eval()` is seen (a forward
pre-hook records the mode of every call); the promised 0-dim tensor is checked as such."""

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import canonical, devices_in, expect_close, expect_device, fail, no_round_trips, running


def explain(device):
    """Where the class weights were, from the devices the error names: left on the CPU, or moved to the
    current accelerator (or a bare kind), which is not the model's device when the model is on another card."""
    def explanation(exc) -> str:
        others = [d for d in devices_in(exc) if canonical(d) != canonical(device)]
        if "cpu" in others or not others:
            return (f"the loss's class weights are on cpu while the model and the batches are on {device}: "
                    "move the loss to the model's device (criterion.to(device)), as you would a model.")
        return (f"the loss's class weights are on {others[0]} while the model and the batches are on {device}: "
                "the current accelerator (or a device named by its kind alone) is not the model's device when "
                "the model is on another card. Move the loss to the model's device, taken from the model: "
                "criterion.to(next(model.parameters()).device).")
    return explanation


def make_model(features: int, classes: int) -> nn.Module:
    """With dropout, so that a loss computed in training mode differs from evaluation's."""
    return nn.Sequential(nn.Linear(features, 12), nn.Tanh(), nn.Dropout(0.5), nn.Linear(12, classes))


def setup(device):
    classes, features = int(torch.randint(3, 7, ())), int(torch.randint(4, 10, ()))
    counts = [int(c) for c in torch.randint(5, 500, (classes,))]
    cpu_model = make_model(features, classes).eval()
    model = make_model(features, classes)
    model.load_state_dict(cpu_model.state_dict())
    model.to(device)
    modes = []
    model.register_forward_pre_hook(lambda module, args: modes.append(module.training))
    batches = []
    for _ in range(int(torch.randint(2, 5, ()))):
        B = int(torch.randint(6, 16, ()))
        batches.append((torch.randn(B, features), torch.randint(0, classes, (B,))))
    counts_t = torch.tensor(counts, dtype=torch.float64)
    weight = (counts_t.sum() / (classes * counts_t)).float()
    with torch.no_grad():
        expected = torch.stack([F.cross_entropy(cpu_model(x), y, weight=weight) for x, y in batches]).mean()
    on_device = [(x.to(device), y.to(device)) for x, y in batches]
    return model, on_device, counts, expected, modes


def run(submission, model, batches, counts, device):
    with running(f"evaluate_loss(model, batches, class_counts) with the model and batches on {device}", submission,
                 explain_device_error=explain(device)):
        return submission.evaluate_loss(model, batches, counts)


def test_loss_on_the_models_device(submission, device):
    model, batches, counts, _, _ = setup(device)
    loss = run(submission, model, batches, counts, device)
    expect_device(loss, device, "the loss returned by evaluate_loss",
                  "keep the loss on the model's device: move the criterion there, not the logits to the CPU.")
    if loss.dim() != 0 or loss.dtype != torch.float32:
        fail(f"evaluate_loss returned a {loss.dtype} tensor of shape {tuple(loss.shape)}; it promises a 0-dim "
             "float32 tensor, the mean of the per-batch losses: torch.stack(losses).mean().")
    moved = sorted({str(p.device) for p in model.parameters() if p.device != next(iter(batches))[0].device})
    if moved:
        fail(f"evaluate_loss moved the model to {', '.join(moved)}: move the loss's weights to the model instead.")


def test_loss_is_the_weighted_cross_entropy(submission, device):
    model, batches, counts, expected, modes = setup(device)
    loss = run(submission, model, batches, counts, device)
    if any(modes):
        fail(f"the model ran in training mode in {sum(modes)} of its {len(modes)} calls: its dropout then "
             "changes the loss from one run to the next. Keep model.eval() before the loop.")
    expect_close(loss, expected, f"the weighted loss for class counts {counts}", atol=1e-5)


def test_no_round_trips(submission, device):
    model, batches, counts, _, _ = setup(device)
    with no_round_trips(device, "evaluate_loss"):
        run(submission, model, batches, counts, device)
