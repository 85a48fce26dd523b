# expect: steps of plain gradient descent from zero
"""Weights made on the device, but fit adds momentum "to converge faster": it still ends near the line after
many steps, yet it is not the plain gradient descent the statement asks for."""
import torch


def init_params(n_features: int, device):
    w = torch.zeros(n_features, device=device, requires_grad=True)
    b = torch.zeros(1, device=device, requires_grad=True)
    return w, b


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    optimizer = torch.optim.SGD([w, b], lr=lr, momentum=0.9)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return w, b
