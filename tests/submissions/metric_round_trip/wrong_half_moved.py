# expect: keep the scores on the device
"""Drops .cpu() on the scores but keeps it on the labels."""

import torch


def topk_hits(logits, labels, k):
    ranked = logits.argsort(dim=1, descending=True)[:, :k]
    return (ranked == labels[:, None]).any(dim=1).sum()


@torch.no_grad()
def evaluate(model, batches, k=3):
    device = batches[0][0].device
    hits = torch.zeros((), dtype=torch.int64, device=device)
    for x, y in batches:
        hits += topk_hits(model(x), y.cpu(), k)
    return hits
