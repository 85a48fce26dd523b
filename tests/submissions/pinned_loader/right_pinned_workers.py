"""Pins for an accelerator only, with a worker process and a pinning thread, and copies through a small
helper."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=False,
                      num_workers=1, pin_memory=torch.device(device).type != "cpu")


def _to(t, device):
    return t.to(device=device, non_blocking=True)


def device_batches(loader, device):
    for batch in loader:
        yield tuple(_to(t, device) for t in batch)
