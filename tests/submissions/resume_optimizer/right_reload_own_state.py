"""Keeps the original order, then reloads the optimizer's own state after the move: load_state_dict casts
every state tensor to its parameter's (new) device."""
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
    optimizer.load_state_dict(optimizer.state_dict())
    return model, optimizer
