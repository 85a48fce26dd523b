"""Resuming training: the optimizer's memory stays behind: solution.

optimizer.load_state_dict() casts each saved state tensor to the device of its parameter *at load time*.
Loaded before model.to(device), Adam's exp_avg and exp_avg_sq land on the CPU, and model.to() does not
touch them: they belong to the optimizer, not to the module. The next step then mixes CPU state with GPU
gradients. Keeping the habitual order, model -> .to(device) -> optimizer -> load_state_dict, puts the
state where the parameters already are.
"""

import torch
from torch import nn

LR = 1e-2


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint: dict, device):
    model = make_model(checkpoint["features"], checkpoint["classes"])
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer
