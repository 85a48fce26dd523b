# expect: the accuracy is
"""Wrong: the accuracy is the mean of the batches' accuracies, which weighs the short last batch like a full one."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=device.type != "cpu")
    model.eval()
    accuracies = []
    probabilities = []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            accuracies.append((p.argmax(dim=1) == y).float().mean())
            probabilities.append(p)
    return torch.stack(accuracies).mean().item(), torch.cat(probabilities).cpu().numpy()
