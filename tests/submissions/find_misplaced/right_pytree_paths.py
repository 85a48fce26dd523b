"""Uses torch.utils._pytree.tree_flatten_with_path for the batch and named_modules + __dict__ for the module."""
import torch
from torch import nn
from torch.utils._pytree import tree_flatten_with_path


def _key(entry) -> str:
    for attr in ("key", "idx", "name"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def find_misplaced(obj, device):
    want = torch.empty(0, device=device).device            # resolves an index-less device to the current one
    if isinstance(obj, nn.Module):
        named = dict(obj.named_parameters())
        named.update(obj.named_buffers())
        for prefix, sub in obj.named_modules():
            for attr, value in sub.__dict__.items():
                if torch.is_tensor(value):
                    named[f"{prefix}.{attr}" if prefix else attr] = value
        return [name for name, t in named.items() if t.device != want]
    leaves, _ = tree_flatten_with_path(obj)
    return [".".join(_key(k) for k in path) for path, leaf in leaves
            if torch.is_tensor(leaf) and leaf.device != want]
