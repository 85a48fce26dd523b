"""Accumulates on the device and prints the epoch's total once, after the loop: one printed tensor, then one
.item(); the device is waited for after the last step only (the print and the read wait at the same point)."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total = torch.zeros((), device=device)
    seen = 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    mean = (total / seen).item()
    print(f"epoch done, mean loss {mean:.4f}")
    return mean
