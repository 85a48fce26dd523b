# expect: keep the scores on the device
"""Keeps the metric on the device, but prints the running count every 100 batches for a progress log: a long
evaluation waits for the device each time."""
import torch


def topk_hits(logits, labels, k):
    ranked = logits.argsort(dim=1, descending=True)[:, :k]
    return (ranked == labels[:, None]).any(dim=1).sum()


@torch.no_grad()
def evaluate(model, batches, k=3):
    device = batches[0][0].device
    hits = torch.zeros((), dtype=torch.int64, device=device)
    for i, (x, y) in enumerate(batches, start=1):
        hits += topk_hits(model(x), y, k)
        if i % 100 == 0:
            print(f"{i} batches, {int(hits)} hits so far")
    return hits
