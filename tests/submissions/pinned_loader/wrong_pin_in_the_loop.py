# expect: pin_memory=True
"""Pins each batch by hand in the training loop: an extra copy on the training thread every step."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size)


def device_batches(loader, device):
    for x, y in loader:
        if torch.device(device).type != "cpu":
            x, y = x.pin_memory(), y.pin_memory()
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
