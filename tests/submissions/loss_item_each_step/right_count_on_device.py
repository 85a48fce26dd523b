"""Keeps both the loss sum and the example count on the device; one .item() of their ratio at the end."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    loss_sum = torch.zeros((), device=device)
    count = torch.zeros((), device=device)
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            loss_sum += loss * y.numel()
            count += y.numel()
    return (loss_sum / count).item()
