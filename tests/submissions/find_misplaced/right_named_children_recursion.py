"""Walks the module tree itself with named_children(), one module at a time, and the batch with a
generator of (path, tensor) pairs."""
import torch
from torch import nn


def _module_tensors(module, prefix=""):
    for attr, value in vars(module).items():
        if attr == "_parameters" or attr == "_buffers":
            for name, t in value.items():
                if t is not None:
                    yield prefix + name, t
        elif isinstance(value, torch.Tensor):
            yield prefix + attr, value
    for child_name, child in module.named_children():
        yield from _module_tensors(child, f"{prefix}{child_name}.")


def _batch_tensors(x, path=()):
    if isinstance(x, torch.Tensor):
        yield ".".join(path), x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _batch_tensors(v, (*path, str(k)))
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _batch_tensors(v, (*path, str(i)))


def find_misplaced(obj, device):
    want = torch.device(device)
    if want.type != "cpu" and want.index is None:
        want = torch.device(want.type, torch.accelerator.current_device_index())
    pairs = _module_tensors(obj) if isinstance(obj, nn.Module) else _batch_tensors(obj)
    return [name for name, t in pairs if t.device != want]
