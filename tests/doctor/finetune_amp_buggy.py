"""Fine-tuning a pretrained regressor with automatic mixed precision and checkpoints, written for CUDA."""
import os

import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
rng = np.random.default_rng(0)


def make_model():
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1))


# A "pretrained" checkpoint, as another run would have left it (made here so that the script needs no files).
if not os.path.exists("pretrained.pt"):
    pre = make_model()
    pre_opt = torch.optim.AdamW(pre.parameters(), lr=1e-3)
    pre(torch.randn(4, 16)).pow(2).mean().backward()
    pre_opt.step()
    torch.save({"model": pre.state_dict(), "optimizer": pre_opt.state_dict()}, "pretrained.pt")

model = make_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
checkpoint = torch.load("pretrained.pt", map_location="cpu")
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
model.cuda()  # BUG: cuda-only
scaler = torch.amp.GradScaler("cuda")  # BUG: cuda-only

features = rng.normal(size=(128, 16)).astype(np.float32)
targets = rng.normal(size=(128, 1))  # float64, as NumPy makes it
for step in range(0, 128, 16):
    x = torch.from_numpy(features[step:step + 16]).cuda()  # BUG: cuda-only
    y = torch.from_numpy(targets[step:step + 16]).cuda()  # BUG: cuda-only float64-on-device
    with torch.autocast("cuda", dtype=torch.float16):  # BUG: cuda-only
        loss = nn.functional.mse_loss(model(x).float(), y.float())
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # BUG: optimizer-state-left-behind device-mismatch
    scaler.update()
    if step % 64 == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "finetuned.pt")
