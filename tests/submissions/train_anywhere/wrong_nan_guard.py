# expect: Keep the running loss on the device
"""Reads the loss once per epoch, but checks every step for NaN with an if on a device tensor."""
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
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            if torch.isnan(loss):
                raise FloatingPointError("loss is NaN")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append(total.item() / batches)
    return history
