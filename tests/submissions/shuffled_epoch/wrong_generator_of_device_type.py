# expect: draws its shuffle on the CPU
"""Takes the device's kind for the generator: still a device generator for the CPU's shuffle."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    generator = torch.Generator(device=torch.device(device).type).manual_seed(seed)
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True, generator=generator)
    return [(x.to(device), y.to(device)) for x, y in loader]
