# expect: to the CPU (
import numpy as np
import torch


def assign(x, centroids):
    xs, cs = x.cpu().numpy(), centroids.cpu().numpy()
    d = ((xs[:, None, :] - cs[None, :, :]) ** 2).sum(-1)
    return torch.from_numpy(d.argmin(1)).to(x.device)
