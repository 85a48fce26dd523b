"""PyTorch's tree utilities, reached through the package (torch.utils._pytree.tree_map)."""
import torch
import torch.utils._pytree


def to_device(batch, device):
    return torch.utils._pytree.tree_map(
        lambda leaf: leaf.to(device) if isinstance(leaf, torch.Tensor) else leaf, batch)
