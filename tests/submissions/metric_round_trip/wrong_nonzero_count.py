# expect: keep the scores on the device
"""Counts the hits with nonzero(): the count's size is a Python int, so the device must finish every batch."""
import torch


@torch.no_grad()
def evaluate(model, batches, k: int = 3) -> torch.Tensor:
    device = batches[0][0].device
    hits = torch.zeros((), dtype=torch.int64, device=device)
    for x, y in batches:
        ranked = model(x).argsort(dim=1, descending=True)[:, :k]
        hits += (ranked == y[:, None]).nonzero().shape[0]
    return hits
