"""Keeps every batch's logits on the device, concatenates, and runs the metric once."""
import torch


def topk_hits(logits, labels, k):
    ranked = logits.topk(k, dim=1).indices
    return (ranked == labels[:, None]).any(dim=1).sum()


def evaluate(model, batches, k=3):
    with torch.inference_mode():
        logits = torch.cat([model(x) for x, _ in batches])
        labels = torch.cat([y for _, y in batches])
        return topk_hits(logits, labels, k)
