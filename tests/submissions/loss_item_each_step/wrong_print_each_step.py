# expect: tensors printed
"""The loss stays on the device and is read once at the end, but every step prints it for the log: print(loss)
reads the value, so Python waits for the device every step, as .item() would (the chapter lists print(t)
among the syncs). It passed while printing counted on no leg (issue 27)."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total = torch.zeros((), device=device)
    seen = 0
    for step, (x, y) in enumerate(batches):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
        print(f"step {step}: loss", loss.detach())
    return total.item() / seen
