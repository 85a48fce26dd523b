# expect: changed the global random stream
"""Seeds the global generators so that the default shuffle repeats."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    torch.manual_seed(seed)
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True)
    return [(x.to(device), y.to(device)) for x, y in loader]
