# expect: exp_avg_sq
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
    for state in optimizer.state.values():
        state["exp_avg"] = state["exp_avg"].to(device)
    return model, optimizer
