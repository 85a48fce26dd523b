"""Non-blocking copies from pageable memory.

make_loader(features, labels, device, batch_size) builds the training DataLoader (in order, no shuffling),
and device_batches(loader, device) hands the training loop each (x, y) batch on `device`. The copies are
asked to be non-blocking, so that Python can queue the model's work while a batch is on its way.

    features  float tensor (N, F) on the CPU;  labels  int64 tensor (N,) on the CPU
    device    where the model is: the CPU or an accelerator
    yields    (x, y) on `device`, batch after batch, with the values of features and labels

Every batch arrives, but on a GPU the copies gain nothing: the loader returns batches in ordinary (pageable)
memory, and a copy from pageable memory cannot run asynchronously; the driver first copies the batch into a
pinned staging buffer, on the calling thread. Fix it so that the loader returns batches in pinned memory
when the data goes to an accelerator (and only then: for the CPU there is nothing to pin for), and each
batch is copied from there with non_blocking=True.

Check your fix with:  devcourse check pinned_loader
"""

import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(features, labels, device, batch_size=64):
    return DataLoader(TensorDataset(features, labels), batch_size=batch_size)


def device_batches(loader, device):
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
