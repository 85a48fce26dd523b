"""TorchScript's interpreter words an error raised by a Python kernel (any simulator operation) without its
message: "The following operation failed in the TorchScript interpreter. ... RuntimeError: " and nothing
after, because PyTorch's C++ python_error holds the text only once persisted. On CUDA the error comes from
C++ and keeps it (fidelity case "jit.trace on the cpu, then run on the device"). The simulator remembers the
text of the last error its operations raised and puts it back when a TorchScript module's call fails so.
A scripted or traced *function* (torch.jit.ScriptFunction, a C++ class) keeps the shorter message."""

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
