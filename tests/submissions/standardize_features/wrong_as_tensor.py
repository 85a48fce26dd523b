# expect: changed the caller's array
import torch


def standardize(features, device):
    x = torch.as_tensor(features, dtype=torch.float32, device=device)
    x -= x.mean(dim=0)
    x /= x.std(dim=0)
    return x
