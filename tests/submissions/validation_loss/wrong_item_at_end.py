# expect: its memory grows with the number of batches
"""Sums the losses with their graphs and only converts the final mean with .item()."""
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    total = 0
    for x, y in batches:
        total = total + F.cross_entropy(model(x), y)
    return (total / len(batches)).item()
