# expect: its memory grows with the number of batches
"""Deletes each loss after adding it, believing that frees the graph (total still references it)."""
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    total = 0.0
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        total += loss
        del loss
    total = total.detach()
    return total / len(batches)
