import torch


def standardize(features, device):
    x = torch.from_numpy(features).to(device, torch.float32).clone()
    x -= x.mean(dim=0)
    x /= x.std(dim=0)
    return x
