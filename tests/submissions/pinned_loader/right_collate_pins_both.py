"""Pins each batch in the loader's collate function (single process), then copies non-blocking."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data import default_collate


def _pinned_collate(examples):
    x, y = default_collate(examples)
    return x.pin_memory(), y.pin_memory()


def make_loader(features, labels, device, batch_size=64):
    accelerator = torch.device(device).type != "cpu"
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size,
                      collate_fn=_pinned_collate if accelerator else None)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
