# expect: build the DataLoader with the batch_size make_loader is given
"""Pins and copies non-blocking, but builds the loader with a batch size of its own: the batches, put together,
are the data in order, but not the batches the training loop asked for."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    pin = torch.device(device).type != "cpu"
    return DataLoader(TensorDataset(features, labels), batch_size=128, pin_memory=pin)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
