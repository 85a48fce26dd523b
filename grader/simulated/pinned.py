"""Pinned (page-locked) host memory, simulated.

The CPU kernels of ``aten::is_pinned`` / ``aten::_pin_memory`` are replaced at install: pinning clones
the tensor into a CPU storage that is flagged "pinned" (tracked by storage address, cleared when the
storage dies).  The flag decides whether a ``non_blocking`` copy is asynchronous (see clock.py).
Pinning a device tensor fails as on CUDA (``_pin_memory`` only accepts dense CPU tensors).

A factory asked for pinned memory (``torch.empty(..., pin_memory=True)``, ``torch.zeros``, ``x.new_empty``...)
takes it from the accelerator's pinned allocator, which C++ asks the PrivateUse1 hooks for
(``getPinnedMemoryAllocator``): a Python backend cannot provide one, and every such call raised. ``install``
wraps the Python factories that take ``pin_memory`` instead: they make an ordinary CPU tensor, flagged pinned,
as CUDA gives a page-locked one."""

from __future__ import annotations

import functools
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
    # As _pin_memory (aten/src/ATen/native/Memory.cpp): pinned storage for the tensor's own sizes and strides
    # (computeStorageNbytes, at offset 0), so a transposed tensor stays transposed, a column slice keeps its
    # strides, and an expanded one is refused by copy_ (its elements would overlap)
    if self.device.type != "cpu":
        raise cannot_pin(self)
    out = torch.empty_strided(self.size(), self.stride(), dtype=self.dtype)
    out.copy_(self)
    return mark_pinned(out)


def is_pinned_kernel(self, device=None):
    return is_pinned_cpu(self)


#: The functions of torch (and methods of Tensor) with a pin_memory argument that Python code calls.
FACTORIES = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "empty_strided",
             "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "arange", "range",
             "linspace", "logspace", "eye", "tensor", "scalar_tensor")
METHODS = ("new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "new_tensor")


def pinned_factory(make):
    """`make`, giving a pinned CPU tensor for pin_memory=True without the pinned allocator (the module docstring)."""
    @functools.wraps(make)
    def factory(*args, **kwargs):
        if not kwargs.get("pin_memory"):
            return make(*args, **kwargs)
        kwargs["pin_memory"] = False
        out = make(*args, **kwargs)
        if out.device.type != "cpu":
            # empty_cuda: TORCH_CHECK(!pin_memory_opt.has_value() || !*pin_memory_opt, "Only dense CPU tensors
            # can be pinned")
            raise RuntimeError("Only dense CPU tensors can be pinned")
        return mark_pinned(out)
    return factory


def install():
    from .script_errors import keep_builtin

    for name in FACTORIES:
        if hasattr(torch, name):
            wrapper = pinned_factory(getattr(torch, name))
            setattr(torch, name, wrapper)
            keep_builtin(wrapper)  # TorchScript compiles it as the aten op it wraps
    for name in METHODS:
        if hasattr(torch.Tensor, name):
            setattr(torch.Tensor, name, pinned_factory(getattr(torch.Tensor, name)))
