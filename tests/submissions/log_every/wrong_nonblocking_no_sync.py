# expect: before the device has run it
# on cuda: passes (it reads a non-blocking copy before it is known to have arrived: on a GPU the copy is usually
# done in time, on the simulator never; the race is real, and the fix is the same)
"""Starts non_blocking copies of the logged losses and reads them without waiting for them to land."""
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    pending = []
    for step in range(steps):
        residual = X @ w - y
        if step % log_every == 0:
            pending.append((step, (residual ** 2).mean().to("cpu", non_blocking=True)))
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, [(s, v.item()) for s, v in pending]
