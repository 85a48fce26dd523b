# expect: each read makes Python wait
import torch


def fit(X, y, steps, lr, log_every):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device)
    log = []
    for step in range(steps):
        residual = X @ w - y
        loss = float((residual ** 2).mean())          # not .item() any more
        if step % log_every == 0:
            log.append((step, loss))
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
