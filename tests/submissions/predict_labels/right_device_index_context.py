"""Makes the model's device current with torch.accelerator.device_index, then uses its full device object."""
import contextlib

import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    ctx = torch.accelerator.device_index(device.index) if device.type != "cpu" else contextlib.nullcontext()
    with ctx:
        logits = model(images.to(device))
    return torch.argmax(logits, 1).cpu()
