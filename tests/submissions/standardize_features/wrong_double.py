# expect: changed the caller's float64 array
import torch


def standardize(features, device):
    x = torch.from_numpy(features).double()   # a float64 copy, so the in-place edits below are safe (?)
    x -= x.mean(dim=0)
    x /= x.std(dim=0)
    return x.to(device, torch.float32)
