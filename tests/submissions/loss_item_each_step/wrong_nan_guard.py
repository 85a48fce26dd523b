# expect: made
"""Sums on the device, but checks every step for a NaN loss with an if on a device tensor."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total, seen = torch.zeros((), device=device), 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        if torch.isnan(loss):
            raise FloatingPointError("loss is NaN")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    return total.item() / seen
