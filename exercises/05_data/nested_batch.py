"""A batch moved only in part.

to_device(batch, device) moves a batch from the DataLoader to the device before the training step. Batches
of real pipelines are nested containers, for instance:

    {"ids": LongTensor (B, T),
     "masks": [BoolTensor (B, T), BoolTensor (B, T)],          # a list of masks
     "labels": (LongTensor (B,), FloatTensor (B,)),            # a tuple: class and weight
     "meta": {"source": "shard-03.txt", "step": 41}}           # strings and numbers

    batch    a tensor, or a dict, list or tuple whose entries may themselves be dicts, lists or tuples,
             to any depth, with tensors and other values (strings, numbers, None) as leaves
    returns  the same structure (the same container types and keys) in which every tensor is on `device`,
             with its values and dtype unchanged, and every other value left as it was

It works on the CPU, but on a GPU the model then fails with a device mismatch: the helper only moves the
tensors at the top of the batch, and a mask inside a list or a label inside a tuple stays on the CPU. Fix it
so that every tensor of the batch, however deep, reaches the device.

Check your fix with:  devcourse check nested_batch
"""

import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(v.to(device) if isinstance(v, torch.Tensor) else v for v in batch)
    return batch                      # strings, numbers, None
