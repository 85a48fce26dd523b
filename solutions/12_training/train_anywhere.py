"""A training loop that only runs on one machine: solution.

- The device is named once, by the caller: model.to(device), never model.to("cuda"), which fails where no
  CUDA exists and puts the model on the wrong GPU everywhere but cuda:0.
- Inputs and labels travel together: the loss compares logits on the device with labels that must be
  there too.
- The loss of each step stays a tensor on the device (loss.detach()), summed there; .item() once per
  epoch is the only time Python waits for the device.
The model is moved before the optimizer is built, the order that is right whatever the optimizer keeps.
"""

import torch
import torch.nn.functional as F
from torch import nn


def train(model: nn.Module, loader, epochs: int, device) -> list[float]:
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for epoch in range(epochs):
        model.train()
        total = torch.zeros((), device=device)
        batches = 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append(total.item() / batches)
    return history
