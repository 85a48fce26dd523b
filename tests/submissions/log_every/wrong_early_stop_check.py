# expect: each read makes Python wait
"""Only reads the loss when logging, but adds a convergence test that compares a device tensor every step."""
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    log = []
    for step in range(steps):
        residual = X @ w - y
        loss = (residual ** 2).mean()
        if step % log_every == 0:
            log.append((step, loss.item()))
        if loss < 1e-12:                 # converged: an `if` on a device tensor reads it
            break
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
