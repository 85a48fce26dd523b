# expect: changed the caller's array
"""Converts with .float() (a no-op on float32) and then edits in place."""
import torch


def standardize(features, device):
    x = torch.from_numpy(features).float().to(device, non_blocking=True)
    x.sub_(x.mean(0))
    x.div_(x.std(0))
    return x
