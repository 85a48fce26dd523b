"""Predictions for scikit-learn.

predict_proba(model, x) runs a classifier on a batch and returns its class probabilities as a NumPy
array, so that scikit-learn can compute metrics from them (roc_auc_score, log_loss, ...).

    model    an nn.Module that maps (B, F) features to (B, C) logits; it lives on some device
    x        float32 tensor (B, F) on the model's device
    returns  a NumPy float32 array (B, C): the softmax of the logits, each row summing to 1

The evaluation script calls it with the model on an accelerator. It crashes, and on the CPU it crashes
too. Fix it so that it works wherever the model lives, bringing the probabilities back to the host in
one copy (the model and the batch stay where they are).

Check your fix with:  devcourse check predict_proba
"""

import numpy as np
import torch
from torch import nn


def predict_proba(model: nn.Module, x: torch.Tensor) -> np.ndarray:
    logits = model(x)
    probs = torch.softmax(logits, dim=1)
    return probs.numpy()
