# expect: float64
"""Wrong: everything fixed but the total, still float64, which MPS cannot hold."""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    total = torch.zeros((), dtype=torch.float64, device=device)
    with torch.no_grad():
        for x, y in batches:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            total += F.cross_entropy(model(x), y)
    return (total / len(batches)).item()
