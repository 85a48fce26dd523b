# expect: float16 array
"""Halves the copy by converting to float16 on the device first."""
import torch


def predict_proba(model, x):
    probs = torch.softmax(model(x), dim=1)
    return probs.detach().half().cpu().numpy()
