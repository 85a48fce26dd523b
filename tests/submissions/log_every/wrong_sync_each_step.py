# expect: explicit synchronisation
"""Reads the loss only when logged but synchronises the device every step "to keep the log accurate"."""
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    log = []
    for step in range(steps):
        residual = X @ w - y
        if step % log_every == 0:
            log.append((step, (residual ** 2).mean().item()))
        w = w - lr * (2.0 / n) * (X.T @ residual)
        if X.device.type != "cpu":
            torch.accelerator.synchronize(X.device)
    return w, log
