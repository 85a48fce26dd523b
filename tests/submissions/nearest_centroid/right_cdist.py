import torch


def assign(x, centroids):
    return torch.cdist(x, centroids).argmin(dim=1)
