"""Logging that makes the GPU wait: solution.

The loss of a step that is not logged is never needed in Python, so it is never read: the loss stays a
tensor on the device, and only the logged ones are kept. Reading them all with one .tolist() at the end
makes the host wait once per call instead of once per step (reading each logged value with .item() when
it is logged is also fine: one wait per log line).
"""

import torch


def fit(X: torch.Tensor, y: torch.Tensor, steps: int, lr: float, log_every: int):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    logged_steps, logged_losses = [], []
    for step in range(steps):
        residual = X @ w - y
        if step % log_every == 0:
            logged_steps.append(step)
            logged_losses.append((residual ** 2).mean())       # a tensor on the device: no wait
        w = w - lr * (2.0 / n) * (X.T @ residual)
    losses = torch.stack(logged_losses).tolist() if logged_losses else []   # one wait
    return w, list(zip(logged_steps, losses))
