# expect: wrong values
"""Out of place, but uses the population standard deviation (NumPy's default ddof=0)."""
import torch


def standardize(features, device):
    x = torch.from_numpy(features).to(device, torch.float32)
    return (x - x.mean(0)) / x.std(0, correction=0)
