# expect: optimizer state is left
"""Moves the checkpoint's optimizer state to the device, but loads it while the model is still on the CPU:
load_state_dict casts it back to the CPU parameters."""
import torch
from torch import nn

LR = 1e-2


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint: dict, device):
    model = make_model(checkpoint["features"], checkpoint["classes"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    saved = checkpoint["optimizer"]
    for state in saved["state"].values():
        for key, value in state.items():
            if torch.is_tensor(value) and key != "step":
                state[key] = value.to(device)
    optimizer.load_state_dict(saved)
    model.to(device)
    return model, optimizer
