"""Capstone of "Inside the accelerator": a validation pass written for one GPU.

validate(model, batches, device) returns the model's mean validation loss, a Python float:

    - batches is a list of (x, y) pairs of CPU tensors; the loss of a batch is F.cross_entropy(model(x), y),
      and the result is the mean of the batches' losses
    - it runs on `device`, whichever that is: "cpu", "cuda:1" on a machine with several GPUs, "mps" on a Mac
      (which has no float64), and in float32 throughout
    - the model is evaluated as in inference: in eval mode, and without autograd, which would keep every
      batch's activations alive until the end
    - Python waits for the device once, for the result

It was written on a one-GPU machine, where it seems to work. It has four bugs of the chapters of this part:
a tensor that lands on the wrong GPU when there are several, a dtype a Mac cannot hold, a running total that
keeps every batch's graph alive, and a result read from a copy that may not have arrived. Fix them.

Check your fix with:  devcourse check validate_anywhere
"""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    total = torch.zeros((), dtype=torch.float64, device=device.type)
    for x, y in batches:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        total += F.cross_entropy(model(x), y)
    mean = (total / len(batches)).to("cpu", non_blocking=True)
    return mean.item()
