# expect: no longer require grad
"""Stops the graph by switching off requires_grad on the caller's model, which then can no longer train."""
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    model.requires_grad_(False)
    total = 0.0
    for x, y in batches:
        total += F.cross_entropy(model(x), y)
    return total / len(batches)
