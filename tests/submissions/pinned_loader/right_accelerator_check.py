"""Pins when an accelerator is the target, asked through torch.accelerator."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    target = torch.device(device)
    pin = torch.accelerator.is_available() and target.type == torch.accelerator.current_accelerator().type
    return DataLoader(TensorDataset(features, labels), batch_size, pin_memory=pin)


def device_batches(loader, device):
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        yield x, y
