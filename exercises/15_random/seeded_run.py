"""A seed that misses the CPU.

seed_everything(seed) makes a run repeatable: after it, train_briefly(seed, device) must give the very same
trained weights every time it is run with the same seed on the same device, and other weights for another
seed. train_briefly initialises a small model (on the CPU, as nn.Linear does), moves it to `device`, and
trains it a few steps on noisy data drawn on `device`, with dropout.

    seed     int
    device   the device to train on: "cpu", "cuda:1", any accelerator
    returns  the trained model, on `device`

seed_everything seeds Python's and NumPy's generators and the GPUs', yet two runs with the same seed differ,
on the CPU and on an accelerator. Fix seed_everything so that the run repeats on any device, without losing
what it seeds already. (Repeatable here means: on one device. A CPU run and a GPU run differ anyway.)

Check your fix with:  devcourse check seeded_run
"""

import random

import numpy as np
import torch
from torch import nn


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)


def train_briefly(seed: int, device, steps: int = 4) -> nn.Module:
    seed_everything(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 1)).to(device)
    target = torch.randn(6, 1, device=device)
    for _ in range(steps):
        x = torch.randn(32, 6, device=device)
        y = x @ target + 0.1 * torch.randn(32, 1, device=device)
        loss = nn.functional.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.05 * p.grad  # plain SGD
    return model
