"""Sums per-example losses on the device (reduction='sum' for the log) and reads them with one .tolist()."""

import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device):
    model.train()
    stats = torch.zeros(2, device=device)       # [sum of losses, examples]
    for x, y in batches:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            stats[0] += F.cross_entropy(logits, y, reduction="sum")
            stats[1] += len(y)
    loss_sum, count = stats.tolist()
    return loss_sum / count
