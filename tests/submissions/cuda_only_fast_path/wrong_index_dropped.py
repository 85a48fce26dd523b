# expect: is on sim:0, but it should be on sim:1
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(torch.device(device).type)     # "any GPU will do"
    model.to(device).eval()
    return torch.cat([model(x.to(device)).argmax(dim=1) for x in batches])
