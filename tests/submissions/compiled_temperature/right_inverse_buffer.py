import torch
from torch import nn


class TemperatureScaled(nn.Module):
    def __init__(self, model, temperature):
        super().__init__()
        self.model = model
        self.register_buffer("inverse", torch.tensor(1.0 / temperature, dtype=torch.float64), persistent=False)

    def forward(self, x):
        logits = self.model(x)
        return logits * self.inverse.to(logits.dtype)
