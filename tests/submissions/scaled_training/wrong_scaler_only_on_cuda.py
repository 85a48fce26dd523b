# expect: the loss was not scaled
# on cuda: passes (the scaler is enabled on CUDA only; every other device trains in float16 unscaled)
import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
