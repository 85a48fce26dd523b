import torch
from torch import nn


def predict(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    mixed = torch.autocast(device_type=str(x.device.type), dtype=torch.bfloat16)
    with torch.no_grad():
        with mixed:
            logits = model(x)
    return logits.type(torch.float32)
