# expect: evaluate moved the model to cpu
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    model.to("cpu")                     # the batches are on the CPU, so bring the model to them
    correct, total = 0, 0
    for images, labels in batches:
        correct += int((model(images).argmax(dim=1) == labels).sum())
        total += labels.numel()
    model.to(device)
    return correct / total
