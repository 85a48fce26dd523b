# expect: the fix changed the result
"""Drops descending=True while rewriting the metric: counts the k lowest scores instead of the highest."""
import torch


@torch.no_grad()
def evaluate(model, batches, k: int = 3) -> torch.Tensor:
    hits = torch.zeros((), dtype=torch.int64, device=batches[0][0].device)
    for x, y in batches:
        ranked = model(x).argsort(dim=1)[:, :k]
        hits += (ranked == y[:, None]).any(dim=1).sum()
    return hits
