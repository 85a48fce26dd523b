# expect: int64
"""Keeps everything on the device but accumulates into a float32 total."""
import torch


@torch.no_grad()
def evaluate(model, batches, k=3):
    hits = torch.zeros((), device=batches[0][0].device)
    for x, y in batches:
        ranked = model(x).argsort(dim=1, descending=True)[:, :k]
        hits += (ranked == y[:, None]).any(dim=1).float().sum()
    return hits
