# expect: pageable
"""Pins in the loader, but device_batches makes a float copy (x.float().clone()) before sending, losing the pinning."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size,
                      pin_memory=torch.device(device).type != "cpu")


def device_batches(loader, device):
    for x, y in loader:
        yield x.clone().to(device, non_blocking=True), y.to(device, non_blocking=True)
