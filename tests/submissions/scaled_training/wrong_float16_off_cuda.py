# expect: ran in float32
# on cuda: passes (mixed precision and the scaler are both switched on for CUDA only)
import torch
import torch.nn.functional as F


def train(model, batches, lr=0.01):
    device = next(model.parameters()).device
    on_cuda = device.type == "cuda"
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda", enabled=on_cuda)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=on_cuda):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
