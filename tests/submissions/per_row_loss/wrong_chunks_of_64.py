# expect: the work grows with the batch
"""Batches the loss, but over chunks of 64 rows ("to bound the memory"): the launches still grow with the
batch size, one set per chunk, which batches of up to 64 rows cannot show."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    parts = []
    for start in range(0, logits.shape[0], 64):
        chunk = slice(start, start + 64)
        parts.append(weights[chunk] * F.cross_entropy(logits[chunk], targets[chunk], reduction="none"))
    return torch.cat(parts).mean()
