"""Predictions for scikit-learn: the reference fix.

NumPy only reads host memory, so an accelerator tensor must be copied to the CPU first (`.cpu()`), and
NumPy cannot record gradients, so the tensor must leave the autograd graph first (`.detach()`). Detach
before the copy, so autograd does not record the copy; `.cpu()` brings the whole (B, C) block back in one
copy, and `.numpy()` wraps the host memory without copying again.
"""

import numpy as np
import torch
from torch import nn


def predict_proba(model: nn.Module, x: torch.Tensor) -> np.ndarray:
    logits = model(x)
    probs = torch.softmax(logits, dim=1)
    return probs.detach().cpu().numpy()
