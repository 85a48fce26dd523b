# expect: move the inputs to the model's device
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Moves the batch with .cuda(index) when CUDA exists, else leaves it on the CPU."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    if torch.cuda.is_available() and device.type == "cuda":
        images = images.cuda(device.index)
    return model(images).argmax(dim=1).cpu()
