# expect: logged values
"""Reads the loss only for the log, plus a convergence test every 100 steps: fits of 40 to 70 steps never reached
it (issue 27), a real fit reads the device there too."""
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
        elif step % 100 == 0 and loss.item() < 1e-12:
            break
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
