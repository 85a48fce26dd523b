# expect: after two more steps
"""Moves first, builds Adam, but loads only the state part and keeps its own (amsgrad) hyperparameters."""
import torch
from torch import nn

LR = 1e-2


def make_model(features, classes):
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint, device):
    model = make_model(checkpoint["features"], checkpoint["classes"])
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR * 10)
    saved = checkpoint["optimizer"]
    params = list(model.parameters())
    for i, st in saved["state"].items():
        optimizer.state[params[i]] = {k: (v.to(device) if k != "step" else v) for k, v in st.items()}
    return model, optimizer
