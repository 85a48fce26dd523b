# expect: int64 tensor of shape ()
"""Stays on the device, but keeps the count in an int32 tensor ("a count fits in 32 bits"): the statement
promises an int64 tensor, the dtype that .sum() of booleans gives and that the caller's code expects."""
import torch


def topk_hits(logits, labels, k):
    ranked = logits.argsort(dim=1, descending=True)[:, :k]
    return (ranked == labels[:, None]).any(dim=1).sum()


@torch.no_grad()
def evaluate(model, batches, k=3):
    device = batches[0][0].device
    hits = torch.zeros((), dtype=torch.int32, device=device)
    for x, y in batches:
        hits += topk_hits(model(x), y, k)
    return hits
