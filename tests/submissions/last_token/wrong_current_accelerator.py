# expect: the culprit is the line that created the index
# on one gpu: passes (a lost index means the only GPU, the one given; the simulator has two devices and makes the other current)
"""Creates the index on the current accelerator, which is not hidden's device when hidden is on the second one."""
import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden, lengths):
        B, T, D = hidden.shape
        dev = torch.accelerator.current_accelerator() if hidden.device.type != "cpu" else hidden.device
        last = torch.tensor(lengths, device=dev) - 1
        return hidden.gather(1, last.view(B, 1, 1).expand(B, 1, D)).squeeze(1)
