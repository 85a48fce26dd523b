"""A ``.grad`` left on the other device by ``p.data = ...``, as CUDA leaves it.

On CUDA, ``p.data = p.data.to(device)`` re-points the parameter at the new data and leaves its ``.grad`` where it
was (VariableHooks::set_data touches no gradient): ``p.grad`` stays on the CPU, an optimizer step then meets a
CPU gradient beside a device parameter, and the next backward fails where AccumulateGrad adds the new gradient to
it (``variable_grad += new_grad``: "Expected all tensors to be on the same device ...").

Here a move between the CPU and the simulated device swaps the tensor's contents (registration.py), and the
``.grad`` setter refuses a gradient of another device type, which set_data never asks it. So the gradient is
kept beside the tensor instead: ``.grad`` answers it until something sets ``.grad`` (``zero_grad()``,
``p.grad = None``), and a hook adds each new gradient to it first, as AccumulateGrad would, with CUDA's refusal.
A device tensor (SimTensor) answers so by its class; a CPU Parameter whose device gradient was left behind is
given a subclass of Parameter that does."""

from __future__ import annotations

import weakref

import torch

_C_GRAD = torch._C.TensorBase.grad  # the C++ getter and setter of .grad
_KEY = "_grad_left_behind"


def _get(self):
    left = self.__dict__.get(_KEY)
    return left if left is not None else _C_GRAD.__get__(self)


def _set(self, value):
    self.__dict__.pop(_KEY, None)
    _C_GRAD.__set__(self, value)


def _delete(self):
    self.__dict__.pop(_KEY, None)
    _C_GRAD.__delete__(self)


GRAD = property(_get, _set, _delete, doc=_C_GRAD.__doc__)


class Parameter(torch.nn.Parameter):
    """A CPU parameter whose .grad was left on the device (named Parameter, as it is one)."""

    grad = GRAD
    _grad = GRAD


Parameter.__name__ = Parameter.__qualname__ = "Parameter"
Parameter.__module__ = "torch.nn.parameter"


def answer_with_grad(cls) -> None:
    """Make tensors of class `cls` answer .grad (and ._grad) with a gradient left behind, if they have one."""
    cls.grad = GRAD
    cls._grad = GRAD


def leave(tensor, grad) -> None:
    """Keep `grad` as `tensor`'s .grad although it is on another device than `tensor` now."""
    if type(tensor) is torch.nn.Parameter:
        tensor.__class__ = Parameter
    elif getattr(type(tensor), "grad", None) is not GRAD:
        raise RuntimeError(f"cannot leave a gradient behind on a {type(tensor).__name__}")
    tensor.__dict__[_KEY] = grad
    if tensor.requires_grad and not tensor.__dict__.get("_grad_left_behind_hook"):
        ref = weakref.ref(tensor)

        def accumulate_into_it(new_grad):
            owner = ref()
            left = owner.__dict__.get(_KEY) if owner is not None else None
            if left is not None:
                with torch.no_grad():
                    left += new_grad  # AccumulateGrad's variable_grad += new_grad, refused across devices
            return new_grad

        from .hook_errors import deferring

        torch.Tensor.register_hook(tensor, deferring(accumulate_into_it))
        tensor.__dict__["_grad_left_behind_hook"] = True
