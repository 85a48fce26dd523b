# expect: Python floats
"""Never reads the loss at all: the history is a list of 0-dim device tensors instead of Python floats."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        total, batches = torch.zeros((), device=device), 0
        for x, y in loader:
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append(total / batches)
    return history
