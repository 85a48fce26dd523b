# expect: nothing waited for
"""Copies each epoch's mean to the host with non_blocking=True and reads it at once: the host reads the buffer
before the device has written it. The message must say so, not only "wrong values (nan)" (issue 27)."""
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
        mean = (total / batches).to("cpu", non_blocking=True)
        history.append(float(mean.numpy()))
    return history
