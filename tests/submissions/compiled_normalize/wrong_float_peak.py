# expect: graph break
import torch


def normalize(x):
    peak = float(x.abs().max())
    return x / peak if peak else torch.zeros_like(x)
