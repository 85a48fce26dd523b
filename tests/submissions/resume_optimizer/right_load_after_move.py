"""Builds the model on the device, then loads both state dicts (load_state_dict copies into device tensors)."""
import torch
from torch import nn

LR = 1e-2


def make_model(features, classes):
    return nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))


def resume(checkpoint, device):
    model = make_model(checkpoint["features"], checkpoint["classes"]).to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer
