# expect: the mean losses train returned has the wrong values
"""Runs on any device, reads once per epoch, but never calls model.train(): a model that arrives in eval mode
trains with its batch norm frozen on the running statistics (the grader's model had no batch norm before)."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        total, batches = 0.0, 0
        for x, y in loader:
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append((total / batches).item())
    return history
