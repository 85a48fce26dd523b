import torch


def standardize(features, device):
    x = torch.tensor(features, dtype=torch.float32, device=device)   # always a copy
    mean, std = x.mean(0, keepdim=True), x.std(0, keepdim=True)
    x.sub_(mean).div_(std)
    return x
