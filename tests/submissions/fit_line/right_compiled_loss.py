"""The loss compiled with torch.compile (the eager backend: no compiler needed), weights made on the device."""

import torch


def _loss(x, y, w, b):
    return ((x @ w + b - y) ** 2).mean()


loss_fn = torch.compile(_loss, backend="eager")


def init_params(n_features: int, device):
    w = torch.zeros(n_features, device=device, requires_grad=True)
    b = torch.zeros(1, device=device, requires_grad=True)
    return w, b


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    optimizer = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(x, y, w, b)
        loss.backward()
        optimizer.step()
    return w, b
