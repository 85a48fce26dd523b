"""PyTorch's own tree utilities map over every leaf of dicts, lists and tuples."""

import torch
from torch.utils._pytree import tree_map


def to_device(batch, device):
    return tree_map(lambda leaf: leaf.to(device) if isinstance(leaf, torch.Tensor) else leaf, batch)
