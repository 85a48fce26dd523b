# expect: still carries the autograd graphs
"""Accumulates on the device and reads once, but adds the loss itself (no .detach()): every step's autograd
graph is chained onto the running total and kept alive until the epoch ends."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total, seen = torch.zeros((), device=device), 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total = total + loss * len(y)
        seen += len(y)
    return total.item() / seen
