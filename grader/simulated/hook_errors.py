"""An exception raised during backward by a hook of a device tensor, or by a device kernel that the engine
called, raised again when the backward returns.

The autograd engine calls a tensor hook from C++ and, when the hook raises, throws without taking Python's
error indicator (torch/csrc/autograd/python_hook.cpp, unlike a Function's backward); unwinding then restores the
device's stream through the Python device guard while that indicator is still set, and the process terminates
("terminate called without an active exception"). So a hook registered on a device tensor runs inside a wrapper
that keeps its exception and returns what the engine refuses with a C++ error of its own, which sets no Python
error: a CPU tensor ("hook ... has changed the type of value", check_variable_result). The backward stops there,
as on CUDA, and backward() (registration.py) raises the hook's exception in place of the engine's.

A device kernel that the engine itself calls (a MulBackward's mul: __torch_dispatch__ straight under the engine,
no Python frame between) ends the same way when it raises: an out-of-memory, a refused device mix, a limit of
the simulator. It keeps its exception too and returns what the dispatcher cannot convert, a C++ error again. An
op called by Python code inside the backward (a Function's backward, a hook) raises as usual: that code may catch
it, and the engine takes the indicator of an error that leaves a Function's backward."""

from __future__ import annotations

import functools

pending: list = []


def deferring(hook):
    @functools.wraps(hook)
    def wrapper(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - any of them would end the process
            pending.append(exc)
            import torch

            return torch.empty(0, dtype=torch.bool)  # of another type than any device tensor's gradient

    return wrapper


@functools.cache
def _engine_call_codes() -> frozenset:
    """The code of the Python function that calls the engine (torch.autograd.graph, imported by then)."""
    import torch.autograd.graph as graph

    return frozenset({graph._engine_run_backward.__code__})


def raised_under_the_engine(frame) -> bool:
    """Whether the op whose __torch_dispatch__ runs in `frame` was called by the autograd engine itself."""
    import torch

    if torch._C._current_graph_task_id() == -1:
        return False
    caller = frame.f_back
    return caller is not None and caller.f_code in _engine_call_codes()


def defer(exc: BaseException) -> object:
    """Keep a kernel's exception for backward() to raise, and what the kernel returns instead: no tensor, so the
    dispatcher fails in C++ (without Python's error indicator) and the engine stops."""
    pending.append(exc)
    return object()


def take_pending():
    """The exception a hook or a kernel raised during the backward that just ended, if any (and forget it)."""
    exc = pending[0] if pending else None
    pending.clear()
    return exc


def install(tensor_class) -> None:
    import torch

    def register_hook(self, hook):
        return torch.Tensor.register_hook(self, deferring(hook))

    def register_post_accumulate_grad_hook(self, hook):
        return torch.Tensor.register_post_accumulate_grad_hook(self, deferring(hook))

    register_hook.__doc__ = torch.Tensor.register_hook.__doc__
    register_post_accumulate_grad_hook.__doc__ = torch.Tensor.register_post_accumulate_grad_hook.__doc__
    tensor_class.register_hook = register_hook
    tensor_class.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
