"""Only CUDA counts as a GPU: solution.

str(device) == "cuda" is true for exactly one device name: not "cuda:1", not "mps", "xpu" or any other
accelerator. Nothing here needs a branch at all: .to(device) works for the CPU and every accelerator
alike. Where code really must tell "an accelerator" from the CPU (to pin memory, say), the
device-agnostic test is device.type != "cpu", never a comparison with one backend's name.
"""

import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(device)
    model.to(device)
    model.eval()
    predictions = [model(x.to(device, non_blocking=True)).argmax(dim=1) for x in batches]
    return torch.cat(predictions)
