"""A right fix: the predicted classes are gathered on the device and compared with the labels once, at the end."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    device = torch.device(device)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=device.type != "cpu")
    model.eval()
    predictions, labels, probabilities = [], [], []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            predictions.append(p.argmax(dim=1))
            labels.append(y)
            probabilities.append(p)
    accuracy = (torch.cat(predictions) == torch.cat(labels)).float().mean().item()
    return accuracy, torch.cat(probabilities).cpu().numpy()
