"""Uses log_softmax + nll_loss with weights created directly on the model's device, summing in place."""
import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    p = next(model.parameters())
    counts = p.new_tensor(class_counts)
    weight = counts.sum() / (counts.numel() * counts)
    losses = torch.stack([F.nll_loss(F.log_softmax(model(x), dim=1), y, weight=weight) for x, y in batches])
    return losses.mean()
