"""pin_memory with pin_memory_device set to the device's type; copies with non_blocking."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    device = torch.device(device)
    if device.type == "cpu":
        return DataLoader(TensorDataset(features, labels), batch_size=batch_size)
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, pin_memory=True)


def device_batches(loader, device):
    for batch in loader:
        yield tuple(t.to(device, non_blocking=True) for t in batch)
