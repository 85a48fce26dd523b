# expect: returned its labels before they had arrived
# on cuda: passes (it reads a non-blocking copy before it is known to have arrived: on a GPU the copy is usually
# done in time, on the simulator never; the race is real, and the fix is the same)
"""Moves the batch correctly but returns the labels with a non_blocking copy that may not have landed."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    return model(images.to(device)).argmax(dim=1).to("cpu", non_blocking=True)
