"""Features that NumPy made float64.

batch_to_device(features, labels, device) turns one batch read from NumPy into tensors ready for a
float32 model on `device`:

    features  np.ndarray (N, F) of float64, as np.load, np.random and pandas give them
    labels    np.ndarray (N,) of int64 class indices
    returns   (x, y): x float32 (N, F) on `device`, y int64 (N,) on `device`

On an NVIDIA GPU the program "works", but x arrives in float64: the first layer of a float32 model
refuses it, and on an Apple GPU (MPS, which has no float64) the copy itself fails with
"Cannot convert a MPS Tensor to float64 dtype". Fix it so that x is float32 on every device, without
sending float64 data to the device first.

Check your fix with:  devcourse check float64_on_mps
"""

import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device)
    y = torch.from_numpy(labels).to(device)
    return x, y
