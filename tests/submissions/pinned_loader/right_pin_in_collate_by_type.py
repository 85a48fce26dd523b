"""A collate_fn that stacks the samples and pins the batch when the device is an accelerator."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    accelerated = torch.device(device).type != "cpu"

    def collate(samples):
        x = torch.stack([s[0] for s in samples])
        y = torch.stack([s[1] for s in samples])
        return (x.pin_memory(), y.pin_memory()) if accelerated else (x, y)

    return DataLoader(TensorDataset(features, labels), batch_size=batch_size, collate_fn=collate)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
