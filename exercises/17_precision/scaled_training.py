"""A loss scaler that switches itself off.

train(model, batches, lr) trains a regression model for one pass over its batches in float16 mixed
precision:

    model    an nn.Module with float32 parameters, in training mode, on the batches' device
    batches  a list of (x, y) pairs of float32 tensors, on the CPU or on an accelerator
    lr       the learning rate of plain SGD (torch.optim.SGD)

Each step runs the forward pass and the mean squared error under torch.autocast in float16 on the batches'
device. float16 cannot hold a gradient below about 6e-8 (it becomes zero), so the step uses a GradScaler: the
loss is multiplied by the scaler's scale before backward(), and the gradients are divided by it again before
the SGD step (a step whose gradients hold an inf or a NaN is skipped, as GradScaler.step does). The parameters
are trained in place; train returns nothing.

Written on a CUDA machine, it works there. On any other device the scaler switches itself off with a warning,
the loss is no longer scaled, and small gradients silently become zero. Fix it so it works on any device.

Check your fix with:  devcourse check scaled_training
"""

import torch
import torch.nn.functional as F
from torch import nn


def train(model: nn.Module, batches: list, lr: float = 0.01) -> None:
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
