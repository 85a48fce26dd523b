# expect: wrong values
"""Copies the probabilities with non_blocking=True and hands the array to NumPy before the copy has landed."""
import torch


@torch.no_grad()
def predict_proba(model, x):
    probs = torch.softmax(model(x), dim=1)
    return probs.to("cpu", non_blocking=True).numpy()
