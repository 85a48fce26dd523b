"""Class weights left on the CPU: solution.

nn.CrossEntropyLoss(weight=...) keeps the weights as a buffer of the loss module, and
torch.tensor(...) put them on the CPU. The loss is a module like the model: move it to the model's
device with .to(), which moves its buffers. (Making the weight tensor on that device in the first
place works too.)
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
    device = next(model.parameters()).device
    criterion = make_criterion(class_counts).to(device)
    losses = [criterion(model(inputs), labels) for inputs, labels in batches]
    return torch.stack(losses).mean()
