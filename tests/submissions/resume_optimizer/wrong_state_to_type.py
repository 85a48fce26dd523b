# expect: is on sim:0
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Moves the optimizer state by hand to torch.device(device).type, which drops the index."""
import torch
from torch import nn

LR = 1e-2


def make_model(features, classes):
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint, device):
    model = make_model(checkpoint["features"], checkpoint["classes"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    kind = torch.device(device).type
    for state in optimizer.state.values():
        for k in ("exp_avg", "exp_avg_sq"):
            state[k] = state[k].to(kind)
    return model, optimizer
