"""Disables autograd with torch.set_grad_enabled(False) and sums detached losses on the device."""
import torch
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    total = 0.0
    with torch.set_grad_enabled(False):
        for x, y in batches:
            total = total + F.cross_entropy(model(x), y)
    return total / len(batches)
