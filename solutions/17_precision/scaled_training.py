"""A loss scaler that switches itself off: solution.

A GradScaler is made for one device type, its first argument: torch.amp.GradScaler("cuda") disables itself
where CUDA is not available. Made for the type of the device the parameters are on, it scales the loss there.
"""

import torch
import torch.nn.functional as F
from torch import nn


def train(model: nn.Module, batches: list, lr: float = 0.01) -> None:
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(device.type)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
