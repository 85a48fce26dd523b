# expect: should be float32
"""Weights on the device as leaves, but in float64 'for a more exact fit'."""
import torch


def init_params(n_features: int, device):
    w = torch.zeros(n_features, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, device=device, requires_grad=True)
    return w, b


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    optimizer = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return w, b
