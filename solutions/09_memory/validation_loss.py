"""A validation loop: the reference fix.

The model's parameters require gradients, so every loss carries an autograd graph, and that graph keeps
the activations it saved for a backward pass that never comes. `total += loss` makes total depend on every
batch's loss, so every graph stays alive until total dies: memory grows with the number of batches.
Under torch.no_grad() no graph is recorded at all (and the forward passes need less memory too);
.item() turns each loss into a Python float.
"""

import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def validation_loss(model: nn.Module, batches) -> float:
    model.eval()
    total = 0.0
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        total += loss.item()
    return total / len(batches)
