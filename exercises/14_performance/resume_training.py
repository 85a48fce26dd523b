"""Capstone of "Putting it together": resuming a run on another machine.

resume(path, loader, device, log_every) continues a training run from its checkpoint and returns
(model, log):

    - the checkpoint at `path` is {"model": the model's state_dict, "optimizer": its AdamW state_dict,
      "step": the last step done, "shape": (features, classes)}, saved on whatever device the last run used:
      often a GPU this machine does not have, or another GPU of it. Loading it must put nothing on that device.
    - the model is make_model(features, classes), with the saved weights, trained on `device` (any device:
      "cpu", "cuda:1", "mps"...) by torch.optim.AdamW(model.parameters(), lr=1e-3) continuing from its saved
      state, for one pass over `loader` (batches (x, y) of CPU tensors) with F.cross_entropy
    - steps are numbered on from the checkpoint's: the first batch is step checkpoint["step"] + 1
    - log is a list of (step, loss) for every step divisible by log_every, the loss of that step as a Python
      float; Python waits for the device at those steps only

It resumes fine on the machine that saved the checkpoint, with one GPU. Elsewhere it has three bugs of the
chapters of this part: the checkpoint lands on the device that saved it, the optimizer's state is left
behind when the model moves, and the loss is read at every step although only every log_every-th is logged.
Fix them.

Check your fix with:  devcourse check resume_training
"""

import torch
import torch.nn.functional as F
from torch import nn


def make_model(features: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))


def resume(path, loader, device, log_every: int):
    checkpoint = torch.load(path, weights_only=True)
    model = make_model(*checkpoint["shape"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
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
