# expect: accumulate the loss on the device
"""Keeps the sum on the device, but reads it every 100 steps for a progress log, as long training loops do:
an epoch of more than 100 steps waits for the device more than once."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total, seen = torch.zeros((), device=device), 0
    for step, (x, y) in enumerate(batches, start=1):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
        if step % 100 == 0:
            running_mean = total.item() / seen      # for a progress bar
    return total.item() / seen
