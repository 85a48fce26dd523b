# expect: device_batches made
"""Pins and copies non-blocking, then waits for the copies with the stream's synchronize() each batch."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size,
                      pin_memory=torch.device(device).type != "cpu")


def device_batches(loader, device):
    device = torch.device(device)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        if device.type != "cpu":
            torch.get_device_module(device).current_stream(device).synchronize()
        yield x, y
