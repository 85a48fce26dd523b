# expect: evaluate over
"""Skips batches with no hit, testing `if hit.any():` on the device value."""
import torch


@torch.no_grad()
def evaluate(model, batches, k=3):
    hits = torch.zeros((), dtype=torch.int64, device=batches[0][0].device)
    for x, y in batches:
        hit = (model(x).topk(k, dim=1).indices == y[:, None]).any(dim=1)
        if hit.any():
            hits += hit.sum()
    return hits
