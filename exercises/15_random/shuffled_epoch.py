"""A shuffle that asks the GPU for a generator.

epoch_batches(features, labels, batch_size, seed, device) returns one epoch of shuffled mini-batches for
training on `device`: a list of (x, y) pairs, each on `device`, that together hold every example exactly
once, in an order that depends on `seed` only. The same seed gives the same order on every call (so a run can
be resumed mid-epoch), another seed another order, and the global random streams (torch.manual_seed's) are
left as they were.

    features  float tensor (N, F), on the CPU (the data set as loaded from disk)
    labels    int64 tensor (N,), on the CPU
    returns   list of (x, y): x (batch_size, F) and y (batch_size,) on `device`; the last batch may be smaller

On the CPU it works; with device "cuda" (or any accelerator) the first batch fails. Fix it.

Check your fix with:  devcourse check shuffled_epoch
"""

import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    generator = torch.Generator(device=device)  # the batches go to `device`, so the shuffle's generator too
    generator.manual_seed(seed)
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True, generator=generator)
    return [(x.to(device), y.to(device)) for x, y in loader]
