# expect: changed the caller's array
import torch


def standardize(features, device):
    x = torch.from_numpy(features).detach().to(device=device, dtype=torch.float32)
    x.sub_(x.mean(dim=0)).div_(x.std(dim=0))
    return x
