"""A sampler with the generator, and the loader given the same one (it draws its workers' base seed from it)."""
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    dataset = TensorDataset(features, labels)
    g = torch.Generator()
    g.manual_seed(seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=RandomSampler(dataset, generator=g), generator=g)
    return [(x.to(device, non_blocking=False), y.to(device)) for x, y in loader]
