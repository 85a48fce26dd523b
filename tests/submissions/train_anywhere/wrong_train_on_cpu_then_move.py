# expect: the training loop must run on the device it is given
"""Trains entirely on the CPU and only moves the finished model to `device` at the end."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    model.to(device)
    return history
