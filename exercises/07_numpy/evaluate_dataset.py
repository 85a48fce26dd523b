"""Capstone of "Feeding the device": an evaluation that keeps the device waiting.

evaluate(model, dataset, device, batch_size=64) runs a trained classifier over a dataset and returns
(accuracy, probabilities):

    - the dataset's items are dicts {"features": a float32 tensor [features], "label": an int}; the model is
      already on `device` (any device: "cpu", "cuda:1", "mps"...) and is evaluated as in inference (eval mode,
      no autograd)
    - batches come from a DataLoader, in the dataset's order, and reach `device` by non_blocking copies that
      really are asynchronous: bound for an accelerator, the loader hands out pinned batches (bound for the
      CPU there is nothing to pin for)
    - accuracy is a Python float: the fraction of items whose most probable class is their label
    - probabilities is a NumPy float32 array [n, classes], the softmax of the model's output, in dataset order
    - Python waits for the device twice in all, whatever the number of batches: once for the accuracy and
      once for the probabilities

It gives the right numbers on the CPU. On a GPU it fails at once, and once it runs it makes the device wait
for Python at every batch. Three bugs of the chapters of this part: its non_blocking copies block, it reads a
count at every batch, and it hands device memory to NumPy. Fix them.

Check your fix with:  devcourse check evaluate_dataset
"""

import numpy as np
import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset, device, batch_size=64):
    loader = DataLoader(dataset, batch_size=batch_size)
    model.eval()
    correct, probabilities = 0, []
    with torch.no_grad():
        for batch in loader:
            x = batch["features"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            p = model(x).softmax(dim=1)
            correct += (p.argmax(dim=1) == y).sum().item()
            probabilities.append(p.numpy())
    return correct / len(dataset), np.concatenate(probabilities)
