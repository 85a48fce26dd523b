# expect: ran in bfloat16
import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
        if torch.isfinite(loss):
            loss.backward()
            optimizer.step()
