# expect: each read makes Python wait
"""Copies every step's loss to the CPU (no .item()), then keeps only the logged ones."""
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    log = []
    for step in range(steps):
        residual = X @ w - y
        loss = (residual ** 2).mean().cpu()
        if step % log_every == 0:
            log.append((step, float(loss)))
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
