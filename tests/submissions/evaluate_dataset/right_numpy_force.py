"""A right fix: .numpy(force=True) brings the gathered probabilities back itself; the count is a float tensor."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=device.type != "cpu")
    model.eval()
    correct = torch.zeros((), device=device)
    probabilities = []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum()
            probabilities.append(p)
    return float(correct) / len(dataset), torch.cat(probabilities).numpy(force=True)
