# expect: Read the loss
"""Wrong: everything fixed but the reads: the loss is read at every step and only some are logged."""

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
        value = loss.item()
        if step % log_every == 0:
            log.append((step, value))
    return model, log
