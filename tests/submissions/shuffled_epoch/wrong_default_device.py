# expect: draws its shuffle on the CPU
"""Makes the device the default so that the batches land there: the sampler's permutation then goes to the
device too, with a CPU generator."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    torch.set_default_device(device)
    try:
        generator = torch.Generator(device="cpu").manual_seed(seed)
        loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True,
                            generator=generator)
        return [(x.to(device), y.to(device)) for x, y in loader]
    finally:
        torch.set_default_device(None)
