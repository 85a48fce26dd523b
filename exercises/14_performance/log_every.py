"""Logging that makes the GPU wait.

fit(X, y, steps, lr, log_every) fits a linear regression by plain gradient descent, entirely on the
device of X and y, and keeps a log of the training loss:

    X (N, F), y (N,)   float32 tensors on the device
    returns (w, log):  w (F,) the fitted weights on the device, and log a list of (step, loss) pairs of
                       Python ints and floats for step = 0, log_every, 2*log_every, ... (< steps), where
                       loss is the mean squared error of the weights *before* that step's update

It computes the right thing, but it reads the loss back to Python with .item() at every step, to throw
most of the values away. Each read makes the host wait until the device has finished all the work
queued so far, so the device idles while Python prepares the next step. Read the loss only for the
steps that are logged (or read all logged values at once at the end).

Check your fix with:  devcourse check log_every
"""

import torch


def fit(X: torch.Tensor, y: torch.Tensor, steps: int, lr: float, log_every: int):
    n = X.shape[0]
    w = torch.zeros(X.shape[1], device=X.device, dtype=X.dtype)
    log = []
    for step in range(steps):
        residual = X @ w - y
        loss = (residual ** 2).mean().item()
        if step % log_every == 0:
            log.append((step, loss))
        w = w - lr * (2.0 / n) * (X.T @ residual)
    return w, log
