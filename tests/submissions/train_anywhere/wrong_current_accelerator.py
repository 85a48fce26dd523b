# expect: the training loop must run on the device it is given
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    accel = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    model.to(accel)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for epoch in range(epochs):
        model.train()
        total, batches = torch.zeros((), device=device), 0
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
