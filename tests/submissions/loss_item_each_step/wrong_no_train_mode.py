# expect: call model.train()
"""Accumulates on the device and reads once, but leaves out model.train(): a model handed over in eval mode
(after a validation pass) trains with its batch norm's running statistics, which it never updates."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    total, seen = torch.zeros((), device=device), 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    return total.item() / seen
