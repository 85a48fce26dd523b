# expect: draws its workers' base seed
"""Gives the generator to the sampler only: the DataLoader still draws a base seed from the global generator."""
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    dataset = TensorDataset(features, labels)
    g = torch.Generator()
    g.manual_seed(seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=RandomSampler(dataset, generator=g))
    batches = []
    for x, y in loader:
        batches.append((x.to(device), y.to(device)))
    return batches
