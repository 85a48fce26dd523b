# expect: wrong values
"""Fixes the copy but takes the softmax over the batch dimension."""
import torch


def predict_proba(model, x):
    return torch.softmax(model(x), dim=0).detach().cpu().numpy()
