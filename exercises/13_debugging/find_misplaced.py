"""A device report that misses most of the suspects.

find_misplaced(obj, device) is a debugging helper: it returns the name of every tensor in `obj` that is
not on `device`, so that a device-mismatch error can be traced to its source in one call.

    obj     an nn.Module, or a batch: a tensor, or dicts / lists / tuples nested in any way
    device  the device everything should be on (a torch.device or a string such as "cuda:1")
    returns a list of names, in any order:
            - in a module: the name from named_parameters() / named_buffers() ("encoder.0.weight",
              "norm.running_mean"), and for a tensor stored as a plain attribute of a (sub)module, its
              dotted path the same way ("encoder.pos" for self.pos of the submodule "encoder")
            - in a batch: the keys and indices on the way to the tensor, joined by dots
              (batch["targets"][0] -> "targets.0"; a bare tensor -> "")

The helper only looks at parameters. The usual suspects (buffers, unregistered tensors, labels and masks
in a batch) go unreported, so it says "all clear" exactly when it is needed. Make it report all of them.

Check your fix with:  devcourse check find_misplaced
"""

import torch
from torch import nn


def find_misplaced(obj, device) -> list[str]:
    device = torch.device(device)
    misplaced = []
    if isinstance(obj, nn.Module):
        for name, p in obj.named_parameters():
            if p.device != device:
                misplaced.append(name)
    return misplaced
