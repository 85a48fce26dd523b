# expect: left in training mode
"""Frees the graphs (torch.no_grad()) but drops model.eval(): the dropout layers stay active during validation,
so the loss is that of a randomly thinned model (the grader's models had no dropout before, so this passed)."""
import torch
import torch.nn.functional as F


def validation_loss(model, batches):
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    return total / len(batches)
