# expect: took the CPU path
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""A longer list of accelerator names is still a list: anything not on it takes the CPU path."""
import torch
from torch import nn

GPUS = ("cuda", "mps", "xpu", "hip")


@torch.no_grad()
def predict(model: nn.Module, batches, device):
    device = torch.device(device)
    run_on = device if device.type in GPUS else torch.device("cpu")
    model.to(run_on).eval()
    return torch.cat([model(x.to(run_on)).argmax(dim=1) for x in batches]).to(device)
