"""A training loop that only runs on one machine.

train(model, loader, epochs, device) trains a classifier and returns the mean training loss of each
epoch as a list of Python floats. The rules of the recipe:

    - the model arrives on the CPU; train moves it to `device` (any device: "cpu", "cuda:1", "mps"...)
    - the optimizer is torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    - the loss is F.cross_entropy(model(x), y) on every batch of the loader, in the loader's order
    - the loader yields (x, y) batches of CPU tensors

It was written for one GPU server and has three device problems: it breaks on a laptop, on an Apple
GPU and on any GPU but the first; once it runs, it breaks again at the loss; and when that is fixed it
still makes the GPU wait for Python at every step, for a number that is only needed once per epoch.
Fix all three. Every device must give the same trained model as the CPU.

Check your fix with:  devcourse check train_anywhere
"""

import torch
import torch.nn.functional as F
from torch import nn


def train(model: nn.Module, loader, epochs: int, device) -> list[float]:
    model.to("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            x = x.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
