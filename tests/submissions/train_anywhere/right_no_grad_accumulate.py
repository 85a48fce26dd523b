"""Accumulates the loss tensor itself under torch.no_grad() and reads it with float() once per epoch."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        total = torch.zeros((), device=device)
        for batches, (x, y) in enumerate(loader, start=1):
            logits = model(x.to(device))
            loss = F.cross_entropy(logits, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                total += loss
        history.append(float(total) / batches)
    return history
