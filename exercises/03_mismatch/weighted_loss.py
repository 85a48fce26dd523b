"""Class weights left on the CPU.

evaluate_loss(model, batches, class_counts) computes the class-weighted cross-entropy of a classifier
over a validation set. Rare classes weigh more: each class gets the weight total / (classes * count).

    model         a classifier, already on its device (a GPU, or the CPU)
    batches       a list of (inputs, labels) pairs, already on the model's device
    class_counts  how many training examples each class has, a list of ints
    returns       the mean of the per-batch losses, a 0-dim tensor on the model's device

It works on the CPU. On a GPU the first batch fails with a device mismatch. Fix it so that it works on
any device, keeping the whole computation there.

Check your fix with:  devcourse check weighted_loss
"""

import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    weight = counts.sum() / (len(counts) * counts)
    return nn.CrossEntropyLoss(weight=weight)


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    criterion = make_criterion(class_counts)
    losses = [criterion(model(inputs), labels) for inputs, labels in batches]
    return torch.stack(losses).mean()
