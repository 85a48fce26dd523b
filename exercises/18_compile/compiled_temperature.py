"""A constant the compiled graph reads from the CPU.

TemperatureScaled(model, temperature) wraps a trained classifier and divides its logits by a temperature,
as calibration does. The service moves it to its device and compiles it, torch.compile(scaled,
mode="reduce-overhead"), so that on a GPU each call replays one CUDA graph:

    model        an nn.Module that maps a float batch (B, F) to logits (B, C)
    temperature  a Python float > 0
    forward(x)   model(x) / temperature, for x on the device the wrapper was moved to

Every tensor the forward pass reads must then be on that device. Here the answers are right, but the
temperature is a plain tensor attribute: .to(device) moves parameters and buffers, not it, so the
compiled graph reads a CPU tensor among the device's (for which older releases skip CUDA graphs altogether:
"skipping cudagraphs due to cpu device"). Fix it so that the temperature moves with the module.

Check your fix with:  devcourse check compiled_temperature
"""

import torch
from torch import nn


class TemperatureScaled(nn.Module):
    def __init__(self, model: nn.Module, temperature: float):
        super().__init__()
        self.model = model
        self.temperature = torch.tensor(float(temperature))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x) / self.temperature
