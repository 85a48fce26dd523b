"""Weights that never get a gradient.

init_params(n_features, device) creates the weights of a linear model, w (n_features,) and b (1,),
zero-initialised, on `device`, ready to be trained. fit(x, y, steps, lr) fits y ≈ x @ w + b by plain
gradient descent (torch.optim.SGD) on the device of x and returns the trained (w, b).

On the CPU it fits. On an accelerator the optimizer refuses the weights before the first step, and a
hand-written update loop would find w.grad to be None. Fix init_params so that w and b are trainable
tensors on the device.

Check your fix with:  devcourse check fit_line
"""

import torch


def init_params(n_features: int, device):
    w = torch.zeros(n_features, requires_grad=True).to(device)
    b = torch.zeros(1, requires_grad=True).to(device)
    return w, b


def fit(x: torch.Tensor, y: torch.Tensor, steps: int = 200, lr: float = 0.1):
    w, b = init_params(x.shape[1], x.device)
    optimizer = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return w, b
