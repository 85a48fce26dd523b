# expect: copies from
"""Keeps the metric on the device but the running total on the CPU."""
import torch


@torch.no_grad()
def evaluate(model, batches, k: int = 3) -> torch.Tensor:
    hits = torch.zeros((), dtype=torch.int64)
    for x, y in batches:
        ranked = model(x).argsort(dim=1, descending=True)[:, :k]
        hits += (ranked == y[:, None]).any(dim=1).sum().cpu()
    return hits
