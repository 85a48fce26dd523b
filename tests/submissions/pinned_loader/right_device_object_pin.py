"""pin_memory decided from a torch.device object; plain non-blocking .to() with keyword arguments."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    device = torch.device(device)
    return DataLoader(dataset=TensorDataset(features, labels), batch_size=batch_size, shuffle=False,
                      pin_memory=device.type != "cpu")


def device_batches(loader, device):
    device = torch.device(device)
    for batch in loader:
        x, y = (t.to(device=device, non_blocking=True) for t in batch)
        yield x, y
