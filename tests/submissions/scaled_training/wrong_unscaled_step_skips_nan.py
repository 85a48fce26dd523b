# expect: times as far
import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(device.type, init_scale=16.0)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        if not torch.isfinite(loss):
            continue
        scaler.scale(loss).backward()
        optimizer.step()
