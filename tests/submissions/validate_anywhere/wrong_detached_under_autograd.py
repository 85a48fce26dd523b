# expect: autograd on
"""Wrong for this statement: the losses are detached, but the model still runs with autograd on, which the
statement rules out (every forward pass saves activations for a backward that never comes)."""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    total = torch.zeros((), device=device)
    if True:
        for x, y in batches:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            total += F.cross_entropy(model(x), y).detach()
    return (total / len(batches)).item()
