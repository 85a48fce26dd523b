import numpy as np
import torch
from torch import nn


@torch.no_grad()
def predict_proba(model: nn.Module, x: torch.Tensor) -> np.ndarray:
    probs = model(x).softmax(dim=-1)
    return np.asarray(probs.to("cpu"))
