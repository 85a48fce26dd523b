"""Batches moved to the device, yet still on the CPU.

evaluate(model, batches, device) measures a classifier's accuracy. The model is already on `device`;
`batches` is a list of (images, labels) pairs straight from the DataLoader, so on the CPU:

    images  float32 (B, F)
    labels  int64 (B,)
    returns the fraction of correct predictions, a Python float between 0 and 1

On the CPU it works. On an accelerator the first batch fails with a device mismatch, although the loop
moves every batch to the device before using it. Fix it; leave the model where it is and leave the
caller's batches as they are.

Check your fix with:  devcourse check eval_loop
"""

import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    total = 0
    for images, labels in batches:
        images.to(device)
        labels.to(device)
        predictions = model(images).argmax(dim=1)
        correct += (predictions == labels).sum()
        total += labels.numel()
    return correct.item() / total
