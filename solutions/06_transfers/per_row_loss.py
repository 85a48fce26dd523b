"""A loss computed one row at a time: solution.

cross_entropy with reduction="none" returns the loss of every row at once, (B,). Multiplying by the
weights and taking the mean are two more batched operations, so the work launched on the device is the
same handful of operations for a batch of 4 rows or of 4,000.
"""

import torch
import torch.nn.functional as F


def weighted_loss(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    per_row = F.cross_entropy(logits, targets, reduction="none")      # (B,), one call for the batch
    return (weights * per_row).mean()
