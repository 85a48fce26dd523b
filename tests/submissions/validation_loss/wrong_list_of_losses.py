# expect: its memory grows with the number of batches
import torch
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    losses = [F.cross_entropy(model(x), y) for x, y in batches]
    return torch.stack(losses).mean().item()
