# expect: explicit synchronisation
"""The loss stays on the device, but the loop waits for the device after every step 'to be safe'."""
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, device) -> float:
    model.train()
    total = torch.zeros((), device=device)
    seen = 0
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
        if torch.device(device).type != "cpu":
            torch.accelerator.synchronize(device)
    return total.item() / seen
