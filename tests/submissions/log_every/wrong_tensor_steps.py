# expect: the steps in the log should be Python ints
"""Logs the step as a tensor (from a step counter kept on the device): the log promises Python ints."""
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    log = []
    for step in torch.arange(steps):
        residual = X @ w - y
        if step % log_every == 0:
            log.append((step, (residual ** 2).mean().item()))
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
