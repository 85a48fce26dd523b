"""The autograd engine's device check of gradients, which it skips for tensor subclasses.

Before a gradient enters the next node of the graph, the engine compares its device with the device of the
tensor it is the gradient of (``validate_outputs`` in torch/csrc/autograd/engine.cpp): a 0-dim gradient is
moved there, any other is refused with "invalid gradient at index i - expected device cuda:0 but got cpu".
The engine skips that comparison when either side is a tensor subclass (pytorch/pytorch#65016), and every
simulated tensor is one, so a CPU gradient would flow on into the graph and end up in ``.grad``.

The gradients that can arrive on the wrong device come from Python: the ones given to ``backward()`` and
``torch.autograd.grad()``, and the ones a custom ``autograd.Function`` returns from ``backward``. Those are the
places this module checks, as the engine would. (Tensor hooks that change a gradient's device are refused by
PyTorch itself, for its type check of hook results also sees subclasses.)
"""

from __future__ import annotations

import functools

import torch
import torch.autograd as ag
from torch.autograd.function import BackwardCFunction

from . import config


def _is_sim(device: torch.device) -> bool:
    return device.type == config.DEVICE_TYPE


def _checked(grad, expected: torch.device, index: int, prefix: str = "") -> torch.Tensor:
    """The gradient as the engine passes it on: moved when 0-dim, else refused on another device. `prefix` begins
    the message ("Function XBackward returned an " for a custom Function)."""
    if not isinstance(grad, torch.Tensor) or grad.device == expected:
        return grad
    if not (_is_sim(grad.device) or _is_sim(expected)):
        return grad  # the engine itself checks what involves no simulated tensor
    if grad.dim() == 0:
        return grad.to(expected)
    raise RuntimeError(f"{prefix}invalid gradient at index {index} - expected device {expected} but got {grad.device}")


def _roots_checked(run, outputs_arg: str, grads_arg: str, grads_pos: int):
    """Wrap torch.autograd.backward / grad: each given gradient against its output, as for the graph's roots."""

    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        outputs = kwargs.get(outputs_arg, args[0] if args else None)
        grads = kwargs.get(grads_arg, args[grads_pos] if len(args) > grads_pos else None)
        if grads is not None and outputs is not None:
            outs = (outputs,) if isinstance(outputs, torch.Tensor) else tuple(outputs)
            given = (grads,) if isinstance(grads, torch.Tensor) else tuple(grads)
            if len(given) == len(outs) and any(isinstance(g, torch.Tensor) and isinstance(o, torch.Tensor)
                                               and g.device != o.device for g, o in zip(given, outs)):
                # a shape mismatch is PyTorch's to report
                fixed = [_checked(g, o.device, i) if isinstance(o, torch.Tensor) and isinstance(g, torch.Tensor)
                         and g.shape == o.shape else g for i, (g, o) in enumerate(zip(given, outs))]
                fixed = fixed[0] if isinstance(grads, torch.Tensor) else type(grads)(fixed)
                if grads_arg in kwargs:
                    kwargs[grads_arg] = fixed
                else:
                    args = (*args[:grads_pos], fixed, *args[grads_pos + 1:])
        return run(*args, **kwargs)

    return wrapper


def _function_backward_checked(apply):
    """Wrap BackwardCFunction.apply: the gradients a custom Function's backward returns, against the devices
    of the inputs of its forward (the input metadata of the nodes its gradients go to)."""

    @functools.wraps(apply)
    def wrapper(self, *args):
        grads = apply(self, *args)
        single = not isinstance(grads, tuple)
        given = (grads,) if single else grads
        edges = self.next_functions  # one per tensor input of forward; `given` has one per input
        positions = _tensor_positions(given, len(edges))
        if positions is None:
            return grads
        prefix = f"Function {type(self).__name__} returned an "
        fixed = list(given)
        for i, (at, (node, nr)) in enumerate(zip(positions, edges)):
            meta = getattr(node, "_input_metadata", None) if node is not None else None
            if isinstance(given[at], torch.Tensor) and meta is not None and nr < len(meta):
                fixed[at] = _checked(given[at], meta[nr].device, i, prefix)
        return fixed[0] if single else tuple(fixed)

    return wrapper


def _tensor_positions(given, tensors: int) -> list[int] | None:
    """Which of backward's results belong to forward's tensor inputs. A non-tensor input's result must be None;
    when exactly the extra results are None, they are those. Otherwise (None for a tensor input as well):
    unknown, and nothing is checked."""
    if not any(isinstance(g, torch.Tensor) for g in given):
        return None
    if len(given) == tensors:
        return list(range(tensors))
    kept = [i for i, g in enumerate(given) if g is not None]
    return kept if len(kept) == tensors else None


def install() -> None:
    ag.backward = _roots_checked(ag.backward, "tensors", "grad_tensors", 1)
    ag.grad = _roots_checked(ag.grad, "outputs", "grad_outputs", 2)
    BackwardCFunction.apply = _function_backward_checked(BackwardCFunction.apply)
