# expect: Keep the running loss on the device
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
