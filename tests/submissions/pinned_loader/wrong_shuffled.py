# expect: in order
"""Pins and copies asynchronously, but turns shuffling on."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True,
                      pin_memory=torch.device(device).type != "cpu")


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
