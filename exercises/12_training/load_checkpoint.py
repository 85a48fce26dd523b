"""Weights saved on someone else's GPU.

load_for_eval(path, device) loads a checkpoint written on the training machine with
torch.save(model.state_dict(), path), and returns a TinyNet holding those weights, on `device`, in eval
mode. The training machine saved it from one of its GPUs ("cuda:0", "cuda:3", ...); the evaluation runs
somewhere else: a laptop (device "cpu"), another GPU of a node, a Mac.

It works when the file comes from the same device it is loaded onto. Loaded anywhere else, it either
fails ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False") or,
on a multi-GPU node, quietly puts a copy of every weight on the GPU that did the saving, in every
process. It also trusts the file more than it should: a checkpoint is a pickle, and this call lets it
run any code it contains. Fix both.

Check your fix with:  devcourse check load_checkpoint
"""

import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, features: int = 8, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def load_for_eval(path, device) -> TinyNet:
    state = torch.load(path, weights_only=False)
    model = TinyNet()
    model.load_state_dict(state)
    return model.to(device).eval()
