"""Pins the batches when the device is an accelerator (device.type != 'cpu') and copies them asynchronously."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(device)
    model.to(device)
    model.eval()
    accelerated = device.type != "cpu"
    out = []
    for x in batches:
        if accelerated:
            x = x.pin_memory()
        out.append(model(x.to(device, non_blocking=accelerated)).argmax(dim=1))
    return torch.cat(out)
