"""Adds the loss to a device total under torch.no_grad() instead of detaching it, counts rows in Python, and
reads the total with float() once."""
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
        with torch.no_grad():
            total.add_(loss, alpha=len(y))
        seen += len(y)
    return float(total) / seen
