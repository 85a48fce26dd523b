# expect: were blocking
"""Pins in the loader, then copies without non_blocking: Python still waits for every copy."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size,
                      pin_memory=torch.device(device).type != "cpu")


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device), y.to(device)
