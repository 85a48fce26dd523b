import torch
from torch import nn


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(device=device.type)
    loss_fn = nn.MSELoss()
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = loss_fn(model(x), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
