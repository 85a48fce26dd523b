"""Resuming training: the optimizer's memory stays behind.

resume(checkpoint, device) rebuilds a classifier and its Adam optimizer from a checkpoint saved on the
CPU, so that training continues on `device` exactly where it stopped:

    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                  "features": F, "classes": C}          (every tensor in it is on the CPU)
    returns (model, optimizer): the model on `device`, and an Adam optimizer of that model holding the
            checkpoint's state (its step counts and moving averages exp_avg, exp_avg_sq)

The training loop that follows calls loss.backward() and optimizer.step() on `device`. On the CPU that
works; on a GPU the first optimizer.step() fails with a device mismatch, although the model, the batch
and the gradients are all on the GPU. Fix resume.

Check your fix with:  devcourse check resume_optimizer
"""

import torch
from torch import nn

LR = 1e-2


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint: dict, device):
    model = make_model(checkpoint["features"], checkpoint["classes"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    return model, optimizer
