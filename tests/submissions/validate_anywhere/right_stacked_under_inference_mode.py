"""A right fix: the losses are gathered on the device under inference_mode and averaged once."""

import torch
import torch.nn.functional as F


def validate(model, batches, device) -> float:
    device = torch.device(device)
    model.to(device).eval()
    losses = []
    with torch.inference_mode():
        for x, y in batches:
            losses.append(F.cross_entropy(model(x.to(device)), y.to(device)))
    return torch.stack(losses).mean().item()
