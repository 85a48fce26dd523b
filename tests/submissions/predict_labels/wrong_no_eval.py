# expect: ran in training mode
"""Moves the batch to the model's device, but rewrote predict without model.eval(): dropout and batch norm
run as in training."""
import torch
from torch import nn


def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits = model(images.to(next(model.parameters()).device))
    return logits.argmax(dim=1).cpu()
