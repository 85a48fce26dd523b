# expect: it needs one, at the end
"""Sums on the device, but waits for the current stream after every step 'so the log is never behind'."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total, seen = torch.zeros((), device=device), 0
    on_accelerator = torch.device(device).type != "cpu"
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
        if on_accelerator:
            torch.accelerator.current_stream(device).synchronize()
    return total.item() / seen
