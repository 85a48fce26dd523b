"""Non-blocking copies from pageable memory: solution.

pin_memory=True makes the DataLoader return every batch in page-locked memory, which the device's DMA engine
reads directly, so a copy with non_blocking=True is only queued and Python goes on at once. Without an
accelerator there is nothing to pin for (the loader would only warn), so the loader pins only when the data
goes to one.
"""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    pin = torch.device(device).type != "cpu"
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, pin_memory=pin)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
