import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    shuffle_rng = torch.Generator(device="cpu").manual_seed(seed)  # the sampler draws on the CPU
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True, generator=shuffle_rng)
    return [(x.to(device), y.to(device)) for x, y in loader]
