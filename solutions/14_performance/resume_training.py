"""Capstone of "Putting it together": solution.

Three fixes. torch.load(..., map_location="cpu") restores every tensor of the checkpoint to the CPU instead of
the device that saved it (which may not exist here). The model moves to `device` before the optimizer is built
and loads its state: Optimizer.load_state_dict puts the saved state (AdamW's moving averages) where each
parameter is at that moment, so a model moved afterwards leaves its optimizer's state behind; it leaves the step
counters where they were loaded, on the CPU, where AdamW reads them without waiting for the device (mapped
straight to the device, they would make it wait twice per parameter at every step). And the loss is read
(.item(), a wait for the device) only at the steps that are logged.
"""

import torch
import torch.nn.functional as F
from torch import nn


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))


def resume(path, loader, device, log_every: int):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = make_model(*checkpoint["shape"]).to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.train()
    log = []
    for step, (x, y) in enumerate(loader, start=checkpoint["step"] + 1):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            log.append((step, loss.item()))
    return model, log
