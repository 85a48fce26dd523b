# expect: raised
"""Keeps the running total as a CPU tensor and adds the device loss into it."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        total, batches = torch.zeros(()), 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append(total.item() / batches)
    return history
