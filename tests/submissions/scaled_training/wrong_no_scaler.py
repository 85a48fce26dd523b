# expect: the loss was not scaled
import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
