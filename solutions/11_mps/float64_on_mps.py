"""Features that NumPy made float64: solution.

torch.from_numpy keeps NumPy's dtype, and NumPy's default is float64. Choosing the dtype at the boundary,
in the same .to() that moves the data, makes one copy that converts on the way: the device never holds a
float64 tensor (MPS could not), and the model gets the float32 it expects on every device.
"""

import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device, dtype=torch.float32)
    y = torch.from_numpy(labels).to(device)
    return x, y
