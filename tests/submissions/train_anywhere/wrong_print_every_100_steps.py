# expect: print(t) of a
"""Keeps the running loss on the device, but prints the loss tensor every 100 steps for a progress line: printing
reads its value. Epochs of 3 to 6 steps never showed it (issue 27)."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history, step = [], 0
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
            step += 1
            if step % 100 == 0:
                print("step", step, "loss", loss)
        history.append((total / batches).item())
    return history
