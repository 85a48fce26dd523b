"""Batched nll_loss on log-probabilities, weighted with a dot product."""

import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    losses = F.nll_loss(F.log_softmax(logits, dim=-1), targets, reduction="none")
    return losses @ weights / len(targets)
