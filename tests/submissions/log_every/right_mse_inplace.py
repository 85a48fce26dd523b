"""Uses F.mse_loss for the logged loss, reads it with .item() only when logged, updates w in place."""
import torch
import torch.nn.functional as F


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = X.new_zeros(X.shape[1])
    log = []
    for step in range(steps):
        pred = X @ w
        if step % log_every == 0:
            log.append((step, F.mse_loss(pred, y).item()))
        w.sub_((2.0 * lr / n) * (X.T @ (pred - y)))
    return w, log
