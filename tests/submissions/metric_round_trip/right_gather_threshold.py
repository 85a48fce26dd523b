"""Counts a hit when fewer than k scores beat the label's score (ties aside), all on the device."""
import torch


@torch.no_grad()
def evaluate(model, batches, k=3):
    total = None
    for x, y in batches:
        logits = model(x)
        own = logits.gather(1, y[:, None])
        hit = ((logits > own).sum(dim=1) < k).sum()
        total = hit if total is None else total + hit
    return total.to(torch.int64)
