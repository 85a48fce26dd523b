# expect: expected
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device)
    log = []
    for step in range(steps):
        residual = X @ w - y
        w = w - lr * (2.0 / n) * (X.T @ residual)
        if step % log_every == 0:
            log.append((step, ((X @ w - y) ** 2).mean().item()))
    return w, log
