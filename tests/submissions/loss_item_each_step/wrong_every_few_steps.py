# expect: accumulate the loss on the device
"""Reads the running sum every 4 steps instead of every step."""

import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total, pending, seen = 0.0, torch.zeros((), device=device), 0
    for step, (x, y) in enumerate(batches):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pending += loss.detach() * len(y)
        seen += len(y)
        if step % 4 == 3:
            total += pending.item()
            pending.zero_()
    return (total + pending.item()) / seen
