# expect: predict moved the model from
"""Brings the model to the CPU batch for the forward pass and puts it back afterwards."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    model.cpu()
    labels = model(images).argmax(dim=1)
    model.to(device)
    return labels
