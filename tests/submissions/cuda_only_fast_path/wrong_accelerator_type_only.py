# expect: should be on sim:1
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Normalises any accelerator to its type, so 'cuda:1' becomes 'cuda' (the current device)."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(device)
    run_on = torch.device(device.type)
    model.to(run_on).eval()
    return torch.cat([model(x.to(run_on)).argmax(dim=1) for x in batches])
