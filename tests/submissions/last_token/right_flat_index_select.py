"""Flattens (B, T) and picks rows with index_select, offsets made by arange on the device."""
import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden, lengths):
        B, T, D = hidden.shape
        dev = hidden.device
        flat = torch.arange(B, device=dev) * T + torch.as_tensor(lengths, device=dev) - 1
        return hidden.reshape(B * T, D).index_select(0, flat)
