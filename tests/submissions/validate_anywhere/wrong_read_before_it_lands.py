# expect: nothing waited for
"""Wrong: everything fixed but the end: the result is read from a non_blocking copy at once."""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    total = torch.zeros((), device=device)
    with torch.no_grad():
        for x, y in batches:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            total += F.cross_entropy(model(x), y)
    return (total / len(batches)).to("cpu", non_blocking=True).item()
