import torch
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    total = torch.zeros((), device=next(model.parameters()).device)
    for x, y in batches:
        total += F.cross_entropy(model(x), y).detach()     # no sync per batch
    return total / len(batches)
