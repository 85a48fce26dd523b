# expect: graph break
import torch


def normalize(x):
    peak = x.abs().max()
    if peak == 0:
        return torch.zeros_like(x)
    return x / peak
