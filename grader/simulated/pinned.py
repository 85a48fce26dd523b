"""Pinned (page-locked) host memory, simulated.

The CPU kernels of ``aten::is_pinned`` / ``aten::_pin_memory`` are replaced at install: pinning clones
the tensor into a CPU storage that is flagged "pinned" (tracked by storage address, cleared when the
storage dies).  The flag decides whether a ``non_blocking`` copy is asynchronous (see clock.py).
Pinning a device tensor fails as on CUDA (``_pin_memory`` only accepts dense CPU tensors)."""

from __future__ import annotations

import weakref

import torch

_pinned: dict[int, int] = {}  # storage data_ptr -> nbytes


def storage_key(t) -> int:
    return t.untyped_storage().data_ptr()


def is_pinned_cpu(t) -> bool:
    if not _pinned or t.device.type != "cpu":
        return False
    try:
        return storage_key(t) in _pinned
    except Exception:
        return False


def mark_pinned(t):
    st = t.untyped_storage()
    key = st.data_ptr()
    if key == 0:
        return t
    _pinned[key] = st.nbytes()
    weakref.finalize(st, _pinned.pop, key, None)
    return t


def cannot_pin(t) -> RuntimeError:
    # aten/src/ATen/native/Memory.cpp: TORCH_CHECK(self.device().is_cpu(), "cannot pin '", self.toString(),
    # "' only dense CPU tensors can be pinned")
    return RuntimeError(f"cannot pin '{t.type()}' only dense CPU tensors can be pinned")


def pin_memory_kernel(self, device=None):
    if self.device.type != "cpu":
        raise cannot_pin(self)
    out = torch.empty_like(self, memory_format=torch.contiguous_format)
    out.copy_(self)
    return mark_pinned(out)


def is_pinned_kernel(self, device=None):
    return is_pinned_cpu(self)
