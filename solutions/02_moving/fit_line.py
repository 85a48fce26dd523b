"""Weights that never get a gradient: solution.

.to() is differentiable. A tensor made with requires_grad=True on the CPU is the leaf; moving it makes
a new, non-leaf tensor on the device whose gradient flows back to the CPU original, so .grad on the
device tensor stays None and the optimizer refuses it ("can't optimize a non-leaf Tensor"). On the CPU
.to("cpu") returns the tensor itself, which is why the bug hides there. Create the weights on their
device from the start (or move first and call .requires_grad_() after).
"""

import torch


def init_params(n_features: int, device):
    w = torch.zeros(n_features, device=device, requires_grad=True)
    b = torch.zeros(1, device=device, requires_grad=True)
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
