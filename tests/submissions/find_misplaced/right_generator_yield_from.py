"""One recursive generator for modules and batches; devices compared after canonicalising the index."""
import torch
from torch import nn


def _tensors(obj, path):
    if isinstance(obj, nn.Module):
        yield from obj.named_parameters()
        yield from obj.named_buffers()
        for prefix, sub in obj.named_modules():
            skip = sub._parameters.keys() | sub._buffers.keys()
            for attr, value in vars(sub).items():
                if isinstance(value, torch.Tensor) and attr not in skip:
                    yield ".".join(p for p in (prefix, attr) if p), value
    elif isinstance(obj, torch.Tensor):
        yield ".".join(path), obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _tensors(v, path + [str(k)])
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _tensors(v, path + [str(i)])


def find_misplaced(obj, device):
    device = torch.device(device)
    if device.type != "cpu" and device.index is None:
        device = torch.device(device.type, torch.accelerator.current_device_index())
    return sorted({name for name, t in _tensors(obj, []) if t.device != device})
