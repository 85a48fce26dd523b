"""The traceback points at gather.

LastTokenPooler turns the hidden states of a padded batch of sequences into one vector per sequence:
the hidden state of each sequence's last real token, as a classifier head on top of a decoder wants.

    hidden   float tensor (B, T, D) on the model's device, padded at the end
    lengths  list of B Python ints from the tokenizer, 1 <= length <= T
    returns  (B, D): hidden[b, lengths[b] - 1] for every b, on hidden's device

On a GPU it fails inside gather with a device-mismatch error, and the line the traceback shows holds
nothing but `hidden` and an index: the culprit was created earlier. Find it and fix it.

Check your fix with:  devcourse check last_token
"""

import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        B, T, D = hidden.shape
        last = torch.tensor(lengths) - 1                    # (B,) position of the last real token
        index = last.view(B, 1, 1).expand(B, 1, D)          # gather needs the index shaped like the output
        return hidden.gather(1, index).squeeze(1)
