# expect: without waiting for the copy
"""Copies the probabilities with non_blocking=True and hands the array to NumPy before the copy has landed.
On a GPU the copy is usually done in time, on the simulator never; the race is real on both, and the grader
counts the copy that nothing waited for on every accelerator leg, so the verdict is the same."""
import torch


@torch.no_grad()
def predict_proba(model, x):
    probs = torch.softmax(model(x), dim=1)
    return probs.to("cpu", non_blocking=True).numpy()
