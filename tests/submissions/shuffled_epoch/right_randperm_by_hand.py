"""No DataLoader: a seeded permutation on the CPU, sliced into batches."""
import torch


def epoch_batches(features, labels, batch_size: int, seed: int, device):
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(features), generator=g)
    return [(features[idx].to(device), labels[idx].to(device)) for idx in order.split(batch_size)]
