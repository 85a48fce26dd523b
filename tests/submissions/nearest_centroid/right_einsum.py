"""Squared distances by einsum expansion, then argmin over centroids."""
import torch


def assign(x, centroids):
    xx = torch.einsum("nd,nd->n", x, x)[:, None]
    cc = torch.einsum("kd,kd->k", centroids, centroids)[None, :]
    d = xx - 2 * torch.einsum("nd,kd->nk", x, centroids) + cc
    return d.argmin(dim=1)
