import torch


def init_params(n_features: int, device):
    w = torch.zeros(n_features, device=device)
    b = torch.zeros(1, device=device)
    w.requires_grad_(True)
    b.requires_grad_(True)
    return w, b


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    for _ in range(steps):
        loss = ((x @ w + b - y) ** 2).mean()
        gw, gb = torch.autograd.grad(loss, (w, b))
        with torch.no_grad():
            w -= lr * gw
            b -= lr * gb
    return w, b
