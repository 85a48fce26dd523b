# expect: is not the model's device when the model is on another card
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Moves the criterion to the current accelerator instead of the model's device."""
import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    return nn.CrossEntropyLoss(weight=counts.sum() / (len(counts) * counts))


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    on_accel = next(model.parameters()).device.type != "cpu"
    criterion = make_criterion(class_counts)
    if on_accel:
        criterion = criterion.to(torch.accelerator.current_accelerator())
    return torch.stack([criterion(model(x), y) for x, y in batches]).mean()
