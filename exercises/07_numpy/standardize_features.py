"""Standardised features, and the caller's data scrambled.

standardize(features, device) turns a NumPy array of raw features into model input: a float32 tensor on
`device` in which every column has mean 0 and standard deviation 1.

    features  NumPy float32 array (N, F), the raw data of a dataset, which the caller keeps using
    device    where the model lives
    returns   float32 tensor (N, F) on `device`, standardised column by column

On the GPU server the training runs fine. On a laptop, the second epoch trains on garbage: after the
first call of standardize, the dataset's own array has changed. Fix standardize so that it never changes
the caller's array, on any device, and returns the same values.

Check your fix with:  devcourse check standardize_features
"""

import numpy as np
import torch


def standardize(features: np.ndarray, device) -> torch.Tensor:
    x = torch.from_numpy(features).to(device, torch.float32)
    x -= x.mean(dim=0)
    x /= x.std(dim=0)
    return x
