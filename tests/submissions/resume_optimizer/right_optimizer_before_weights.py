"""Model on the device first, optimizer built from it, then both state_dicts loaded (in place)."""
import torch
from torch import nn

LR = 1e-2


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint: dict, device):
    device = torch.device(device)
    model = make_model(checkpoint["features"], checkpoint["classes"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer
