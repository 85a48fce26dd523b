# expect: should return int64 class indices
"""Moves the batch correctly but returns int32 labels to save space in the CSV."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    return model(images.to(device)).argmax(dim=1).int().cpu()
