"""TorchScript's interpreter words an error raised by a Python kernel (any simulator operation) without its
message: "The following operation failed in the TorchScript interpreter. ... RuntimeError: " and nothing
after, because PyTorch's C++ python_error holds the text only once persisted. On CUDA the error comes from
C++ and keeps it (fidelity case "jit.trace on the cpu, then run on the device"). The simulator remembers the
text of the last error its operations raised and puts it back when a TorchScript module's call fails so.
A scripted or traced *function* (torch.jit.ScriptFunction, a C++ class) keeps the shorter message.

`keep_builtin` lets TorchScript compile a call of a torch function that the simulator wraps (torch.tensor,
torch.zeros...) as the aten op it stands for: TorchScript knows torch's functions by identity, and would try to
compile the wrapper's Python source instead ("code object was expected, got builtin_function_or_method")."""

from __future__ import annotations

import threading

import torch

_last = threading.local()


def remember(exc: BaseException) -> None:
    """Called by the simulator's dispatch for each error it raises (rare, so cheap)."""
    _last.text = str(exc)


def install() -> None:
    cls = torch.jit.ScriptModule  # scripted and traced modules
    call = cls.__call__

    def __call__(self, *args, **kwargs):
        _last.text = None
        try:
            return call(self, *args, **kwargs)
        except RuntimeError as e:
            text, lost = str(e), getattr(_last, "text", None)
            if lost and text.rstrip().endswith("RuntimeError:"):
                raise RuntimeError(text.rstrip("\n") + lost + "\n") from None
            raise

    cls.__call__ = __call__


def keep_builtin(wrapper) -> None:
    """Register `wrapper` (functools.wraps of a torch builtin, perhaps through other wrappers) as the builtin it
    wraps for TorchScript (the module docstring)."""
    from torch.jit import _builtins

    inner = wrapper
    while inner is not None:
        op = _builtins._find_builtin(inner)
        if op is not None:
            _builtins._register_builtin(wrapper, op)
            return
        inner = getattr(inner, "__wrapped__", None)
