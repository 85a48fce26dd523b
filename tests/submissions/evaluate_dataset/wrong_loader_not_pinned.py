# expect: asynchronous only from pinned memory
"""Wrong: the reads are fixed but the loader still hands out pageable batches, so each non_blocking copy blocks."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size)
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    probabilities = []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum()
            probabilities.append(p)
    return correct.item() / len(dataset), torch.cat(probabilities).cpu().numpy()
