# expect: shape
"""Stays on the device, but returns the total with shape (1,)."""
import torch


@torch.no_grad()
def evaluate(model, batches, k=3):
    hits = torch.zeros(1, dtype=torch.int64, device=batches[0][0].device)
    for x, y in batches:
        hits += (model(x).topk(k, dim=1).indices == y[:, None]).any(dim=1).sum()
    return hits
