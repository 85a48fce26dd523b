# expect: is not a leaf
"""One device tensor for all weights, split into w and b: slices of a leaf are views, not leaves."""
import torch


def init_params(n_features: int, device):
    params = torch.zeros(n_features + 1, device=device, requires_grad=True)
    return params[:n_features], params[n_features:]


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    optimizer = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return w, b
