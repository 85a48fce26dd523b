"""A right fix under torch.inference_mode(), with the pinning decided from the device's type string."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=str(device) != "cpu")
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    probabilities = []
    with torch.inference_mode():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum()
            probabilities.append(p)
    return correct.item() / len(dataset), torch.cat(probabilities).cpu().numpy()
