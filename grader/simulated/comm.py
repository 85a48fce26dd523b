"""``torch.nn.parallel.comm`` (DataParallel's scatter, gather and broadcasts) for tensors on the simulated device.

CUDA implements these collectives in C++ (``torch._C._scatter`` ...), which a CPU build of torch lacks and a
CUDA build runs for CUDA tensors only. Here they are the copies CUDA makes (each result on its device, the
source's own tensors kept for the source device), so ``nn.DataParallel`` replicates, scatters, runs and
gathers, forward and backward, on ``sim:0`` and ``sim:1`` as it does on two GPUs. Other tensors go to
PyTorch's own functions."""

from __future__ import annotations

import warnings

import torch
from torch._utils import _get_device_index

from .config import DEVICE_TYPE

_NAMES = ("broadcast", "broadcast_coalesced", "scatter", "gather", "reduce_add", "reduce_add_coalesced")
_TORCH = {}


def _on_sim(tensors) -> bool:
    """For the sim: a tensor on it, or CPU tensors sent to device indices while the sim is the accelerator."""
    types = {t.device.type for t in tensors if isinstance(t, torch.Tensor)}
    if DEVICE_TYPE in types:
        return True
    if types - {"cpu"}:
        return False
    current = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return current is not None and current.type == DEVICE_TYPE


def _device(index) -> torch.device:
    return torch.device(DEVICE_TYPE, _get_device_index(index))


def broadcast(tensor, devices=None, *, out=None):
    if not _on_sim([tensor]) or out is not None:
        return _TORCH["broadcast"](tensor, devices, out=out)
    return tuple(tensor.to(_device(d)) for d in devices)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    if not _on_sim(tensors):
        return _TORCH["broadcast_coalesced"](tensors, devices, buffer_size)
    targets = [_device(d) for d in devices]
    for t in tensors:
        if t.device != targets[0]:
            raise RuntimeError(f"All tensors must be on devices[0]: {targets[0].index}")  # CUDA's words
    return [list(tensors)] + [[t.to(d) for t in tensors] for d in targets[1:]]


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    if not _on_sim([tensor]) or out is not None:
        return _TORCH["scatter"](tensor, devices, chunk_sizes, dim, streams, out=out)
    targets = [_device(d) for d in devices]
    chunks = tensor.split(list(chunk_sizes), dim) if chunk_sizes is not None else tensor.chunk(len(targets), dim)
    return tuple(chunk.to(d) for chunk, d in zip(chunks, targets))


def gather(tensors, dim=0, destination=None, *, out=None):
    if not _on_sim(tensors) or out is not None:
        return _TORCH["gather"](tensors, dim, destination, out=out)
    if destination == -1 or (isinstance(destination, (str, torch.device)) and torch.device(destination).type == "cpu"):
        target = torch.device("cpu")
    else:
        target = _device(destination if destination is not None else torch.accelerator.current_device_index())
    return torch.cat([t.to(target) for t in tensors], dim)


def reduce_add(inputs, destination=None):
    # PyTorch's own, in Python: its only C++ path (NCCL) is for CUDA tensors; a CPU build warns that it has no
    # NCCL, which CUDA does not say
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PyTorch is not compiled with NCCL support")
        return _TORCH["reduce_add"](inputs, destination)


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PyTorch is not compiled with NCCL support")
        return _TORCH["reduce_add_coalesced"](inputs, destination, buffer_size)


def install() -> None:
    """Route the sim's tensors through the functions above, in both modules that export them."""
    import torch.cuda.comm as cuda_comm
    import torch.nn.parallel.comm as comm

    for name in _NAMES:
        _TORCH.setdefault(name, getattr(comm, name))
        for module in (comm, cuda_comm):
            if hasattr(module, name):
                setattr(module, name, globals()[name])
