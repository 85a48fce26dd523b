# expect: each makes Python
"""Wrong: pinned and gathered right, but the count is read with .item() at every batch."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=device.type != "cpu")
    model.eval()
    correct = 0
    probabilities = []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum().item()
            probabilities.append(p)
    return correct / len(dataset), torch.cat(probabilities).cpu().numpy()
