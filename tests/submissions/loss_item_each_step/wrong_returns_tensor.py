# expect: should return the mean loss as a Python float
"""Never reads the total at all: returns a device tensor where the log expects a number."""

import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device):
    model.train()
    total, seen = torch.zeros((), device=device), 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    return total / seen
