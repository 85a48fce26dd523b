# expect: chains each step's graph to the next
"""Reads once per epoch, but sums the loss tensors themselves: total += loss chains every step's autograd graph to
the next, all kept alive until the epoch ends (the chapter teaches loss.detach())."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total = total + loss
            batches += 1
        history.append((total / batches).item())
    return history
