# expect: another order the second time
"""Drops the generator that failed."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    loader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, shuffle=True)
    return [(x.to(device), y.to(device)) for x, y in loader]
