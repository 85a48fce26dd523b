# expect: a device without its index
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Moves the model to device.type: the current device, not the one given; the message must not blame a 'cuda'
literal (issue 27)."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    device = torch.device(device)
    model.to(device.type)
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
            total += loss.detach()
            batches += 1
        history.append((total / batches).item())
    return history
