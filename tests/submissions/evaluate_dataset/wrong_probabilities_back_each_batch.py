# expect: each makes Python
"""Wrong: each batch's probabilities come back to the CPU (for NumPy) inside the loop: a wait per batch."""

import numpy as np
import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=device.type != "cpu")
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    probabilities = []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum()
            probabilities.append(p.cpu().numpy())
    return correct.item() / len(dataset), np.concatenate(probabilities)
