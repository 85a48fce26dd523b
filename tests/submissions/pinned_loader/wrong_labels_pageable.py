# expect: read pageable (not pinned) memory
"""Pins the inputs only, in a collate function; the labels stay in pageable memory."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def _collate(examples):
    xs, ys = zip(*examples)
    return torch.stack(xs).pin_memory(), torch.stack(ys)


def make_loader(features, labels, device, batch_size=64):
    on_accelerator = torch.device(device).type != "cpu"
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size,
                      collate_fn=_collate if on_accelerator else None)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
