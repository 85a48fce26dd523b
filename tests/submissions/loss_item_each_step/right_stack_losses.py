"""Detached per-step losses kept on the device, weighted and summed once at the end."""

import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    losses, sizes = [], []
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        sizes.append(len(y))
    weights = torch.tensor(sizes, dtype=torch.float32).to(device)
    return float((torch.stack(losses) * weights).sum()) / sum(sizes)
