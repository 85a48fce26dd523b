"""A shuffle that asks the GPU for a generator: solution.

The DataLoader shuffles on the CPU (its sampler draws a permutation of the indices with torch.randperm, on the
CPU), so its generator must be a CPU generator, whatever device the batches go to.
"""

import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    generator = torch.Generator()
    generator.manual_seed(seed)
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True, generator=generator)
    return [(x.to(device), y.to(device)) for x, y in loader]
