# expect: means the current device
# on one gpu: passes (device.type names the only GPU, which is the one given)
"""Wrong: everything fixed but the total's device, made from device.type, which drops the index."""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    total = torch.zeros((), device=device.type)
    with torch.no_grad():
        for x, y in batches:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            total += F.cross_entropy(model(x), y)
    return (total / len(batches)).item()
