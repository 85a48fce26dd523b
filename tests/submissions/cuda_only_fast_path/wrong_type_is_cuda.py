# expect: took the CPU path
# on cuda: passes (the simulator stands for an accelerator that is neither CUDA nor MPS, which this code sends down its CPU path)
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(device)
    run_on = device if device.type == "cuda" else torch.device("cpu")
    model.to(run_on).eval()
    predictions = [model(x.to(run_on)).argmax(dim=1) for x in batches]
    return torch.cat(predictions).to(device)
