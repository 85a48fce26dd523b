# expect: wrong values
# on cuda: passes (it reads a non-blocking copy before it is known to have arrived: on a GPU the copy is usually
# done in time, on the simulator never; the race is real, and the fix is the same)
"""Copies the probabilities with non_blocking=True and hands the array to NumPy before the copy has landed."""
import torch


@torch.no_grad()
def predict_proba(model, x):
    probs = torch.softmax(model(x), dim=1)
    return probs.to("cpu", non_blocking=True).numpy()
