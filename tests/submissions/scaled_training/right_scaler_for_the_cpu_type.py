import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    # The scale lives where the first scaled loss is; the device type only matters for "cuda", which switches the
    # scaler off where CUDA is missing. "cpu" never does.
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda" if device.type == "cuda" else "cpu")
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
