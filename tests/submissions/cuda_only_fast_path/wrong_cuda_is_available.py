# expect: took the CPU path
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Uses torch.cuda.is_available() to decide whether it runs on a GPU: MPS/XPU/other accelerators take the CPU path."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches, device):
    device = torch.device(device)
    run_on = device if torch.cuda.is_available() else torch.device("cpu")
    model.to(run_on).eval()
    preds = torch.cat([model(x.to(run_on)).argmax(dim=1) for x in batches])
    return preds.to(device)
