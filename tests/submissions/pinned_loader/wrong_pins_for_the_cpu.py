# expect: pin only when the data goes to an accelerator
"""Always pins, the CPU's batches too: the docstring asks for pinned memory only when the data goes to an
accelerator (for the CPU it takes page-locked memory and gains nothing; without an accelerator the loader
only warns)."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, pin_memory=True)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
