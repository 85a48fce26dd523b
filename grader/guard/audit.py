"""What learner code may not leave behind in the grading process, and the threads it may not start.

The checks read a result right after the learner's call returns, and the plugin turns the outcome into a record
and sends it. Code planted by the learner must not run in between: a trace or profile function, a garbage
collector callback, a signal handler, a torch mode left on a stack, a lowered recursion limit, or a thread of
its own could change the result, the report or the channel after the outcome was decided. `Interpreter()` takes
what the grader itself set up (before the submission is loaded); `changes()` names what differs, and the plugin
fails the check, then stops the worker, when anything does (grader.engine.plugin).

Threads: PyTorch's dispatch modes, which count copies and waits, belong to one thread, so work done on a helper
thread that the call joins would go uncounted. `guard_threads()` refuses every thread that the learner's code
starts (the same on every leg); threads that torch, the standard library on torch's behalf, or the grader start
(a DataLoader's pin-memory thread, a multiprocessing queue's feeder) are not the learner's and go on.
"""

from __future__ import annotations

import _signal
import gc
import os
import signal
import sys
import sysconfig
import threading

import torch

import grader

_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
_TORCH = os.path.realpath(os.path.dirname(torch.__file__)) + os.sep
_GRADER = os.path.realpath(os.path.dirname(grader.__file__)) + os.sep


class ThreadRefused(RuntimeError):
    pass


THREAD_MESSAGE = ("the grader does not let your code start threads: PyTorch counts the copies and waits of each "
                  "thread apart, so work done on another thread would escape the checks. No exercise needs one: "
                  "do the work on the calling thread.")


def _whose(code) -> str | None:
    """"learner" for the learner's code (or code made at run time, '<string>'), "library" for torch's, the
    grader's, an installed package's or a frozen module's, None for the standard library's (threading,
    concurrent.futures and multiprocessing start threads on behalf of their callers)."""
    path = code.co_filename
    if not os.path.isabs(path):
        return "library" if path.startswith("<frozen") else "learner"
    real = os.path.realpath(path)
    if f"{os.sep}site-packages{os.sep}" in real or real.startswith((_TORCH, _GRADER)):  # a folder, not a name
        return "library"
    return None if real.startswith(_STDLIB) else "learner"


def _starter_is_learner(frame) -> bool:
    """Whether the code that asked for a thread is the learner's: the first frame, from the innermost, that is
    not the standard library's."""
    while frame is not None:
        whose = _whose(frame.f_code)
        if whose is not None:
            return whose == "learner"
        frame = frame.f_back
    return False


def _runs_learner_code(frame) -> bool:
    """Whether any frame of this stack is code of the learner's."""
    while frame is not None:
        if _whose(frame.f_code) == "learner":
            return True
        frame = frame.f_back
    return False


_started: set[int] = set()  # threads that torch, the grader or the standard library on their behalf started


def guard_threads() -> None:
    """From now on, a thread whose start the learner's code asked for raises ThreadRefused instead of starting.
    Threads all start through the `threading` module's one reference to the interpreter's primitive (learner
    code cannot reach `_thread`: grader.guard.policy refuses underscore modules and attributes)."""
    for name in ("_start_joinable_thread", "_start_new_thread"):  # Python 3.13+, before it
        original = getattr(threading, name, None)
        if original is None or getattr(original, "_devcourse_guard", False):
            continue

        def start(*args, _original=original, **kwargs):
            if _starter_is_learner(sys._getframe(1)):
                raise ThreadRefused(THREAD_MESSAGE)
            ident = _original(*args, **kwargs)
            if isinstance(ident, int):
                _started.add(ident)
            return ident

        start._devcourse_guard = True
        setattr(threading, name, start)


#: Read after every call of learner code: the signals and the C function, taken once (signal.getsignal adds an
#: enum conversion per signal, most of the cost of a check's audit).
_SIGNALS = sorted(signal.valid_signals())
_getsignal = _signal.getsignal


def _handlers() -> dict:
    found = {}
    for sig in _SIGNALS:
        try:
            found[sig] = _getsignal(sig)
        except (ValueError, OSError):
            pass
    return found


def _handler_allowed(sig, handler) -> bool:
    """pytest-timeout puts its SIGALRM handler in place around each check, the plugin its SIGPROF one (the
    grader's own), and a DataLoader with worker processes puts torch's SIGCHLD handler in place (torch's own)."""
    code = getattr(handler, "__code__", None) or getattr(getattr(handler, "__func__", None), "__code__", None)
    if code is None:
        return False
    path = os.path.realpath(code.co_filename)
    return path.startswith((_TORCH, _GRADER)) or (sig == signal.SIGALRM and "pytest_timeout" in path)


def _mode_types_allowed() -> tuple[set, set]:
    """The modes the grader itself enters while learner code runs (registered in CHECK_MODES), and the one torch
    enters for `torch.set_default_device` / `with torch.device(...)`, which fixes may use."""
    from torch.utils._device import DeviceContext

    return {DeviceContext}, set(CHECK_MODES)


#: Dispatch-mode classes the grader itself enters around learner code: grader.engine.instruments' counting mode
#: and each hidden check's own (a module adds its own on import), so that this layer need not import them.
CHECK_MODES: set = set()


class Interpreter:
    """The interpreter's hooks as the grader set them up, before the submission is loaded."""

    def __init__(self):
        self.trace, self.profile = sys.gettrace(), sys.getprofile()
        self.thread_trace, self.thread_profile = threading.gettrace(), threading.getprofile()
        self.gc_callbacks = list(gc.callbacks)
        self.handlers = _handlers()
        self.recursion_limit = sys.getrecursionlimit()
        self.threads = {t.ident for t in threading.enumerate()}
        self.torch_state = _torch_state()

    def restore_recursion_limit(self) -> bool:
        """Put the limit back first, so that the grader's own calls are not the ones to hit it; whether it had
        changed."""
        if sys.getrecursionlimit() == self.recursion_limit:
            return False
        sys.setrecursionlimit(self.recursion_limit)
        return True

    def changes(self) -> list[str]:
        """What learner code set up or left running, in words (empty: nothing)."""
        out = []
        if self.restore_recursion_limit():
            out.append("changed the recursion limit (sys.setrecursionlimit)")
        if sys.gettrace() is not self.trace or threading.gettrace() is not self.thread_trace:
            out.append("set a trace function (sys.settrace)")
        if sys.getprofile() is not self.profile or threading.getprofile() is not self.thread_profile:
            out.append("set a profile function (sys.setprofile)")
        if len(gc.callbacks) != len(self.gc_callbacks) or any(a is not b for a, b in zip(gc.callbacks,
                                                                                          self.gc_callbacks)):
            out.append("added a garbage-collector callback (gc.callbacks)")
        for sig, handler in _handlers().items():
            if handler != self.handlers.get(sig) and not _handler_allowed(sig, handler):
                out.append(f"installed a handler for signal {signal.Signals(sig).name}")
        out += _foreign_modes()
        now = _torch_state()
        out += [f"left {what}" for what, value in now.items() if value != self.torch_state.get(what)]
        out += self._foreign_threads()
        return out

    def _foreign_threads(self) -> list[str]:
        """Threads alive now that the grader did not see start, and which are not torch's (a learner's thread
        cannot start: guard_threads; one started some other way is still found here)."""
        for ident, frame in sys._current_frames().items():
            if ident in self.threads or ident in _started or ident == threading.get_ident():
                continue
            if _runs_learner_code(frame):
                return ["left a thread running"]
        return []


def _torch_state() -> dict:
    """torch's process-wide state that runs in, or changes, the grader's own computations after a call returns:
    the global hooks of every optimizer and module that are not torch's or the grader's (an optimizer step
    pre-hook of the learner's runs in the check's reference optimizer too, and can give it the learner's wrong
    learning rate), autograd's saved-tensors hooks (entered and never left, they rewrite what every later
    backward reads) and the default dtype. Hooks are compared by identity, so one swapped for another counts."""
    import torch.nn.modules.module as module_hooks
    import torch.optim.optimizer as optimizer_hooks

    state = {}
    for owner, kind in ((optimizer_hooks, "optimizer"), (module_hooks, "module")):
        for name, registry in list(vars(owner).items()):
            if name.startswith("_global_") and isinstance(registry, dict):
                foreign = tuple(id(h) for h in list(registry.values()) if callable(h) and not _library_code(h))
                state[f"a global {kind} hook ({name.removeprefix('_global_')})"] = foreign
    top = torch._C._autograd._top_saved_tensors_default_hooks(False)
    state["autograd's saved-tensors hooks active (torch.autograd.graph.saved_tensors_hooks)"] = (
        None if top is None else tuple(map(id, top)))
    state["torch's default dtype changed (torch.set_default_dtype)"] = torch.get_default_dtype()
    return state


def _library_code(function) -> bool:
    """Whether a hook is torch's or the grader's own (grader.engine.expect.forward_passes registers a global one)."""
    code = getattr(function, "__code__", None) or getattr(getattr(function, "__func__", None), "__code__", None)
    return code is not None and os.path.realpath(code.co_filename).startswith((_TORCH, _GRADER))


def _foreign_modes() -> list[str]:
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    function_ok, dispatch_ok = _mode_types_allowed()
    out = [f"left a torch function mode active ({type(m).__name__})" for m in _get_current_function_mode_stack()
           if type(m) not in function_ok]
    out += [f"left a torch dispatch mode active ({type(m).__name__})" for m in _get_current_dispatch_mode_stack()
            if type(m) not in dispatch_ok]
    return out


#: Taken by the plugin once the checks are collected, before the submission is loaded.
interpreter: Interpreter | None = None
#: Why the grading stopped (set once learner code left something behind): no check after it is trusted.
tainted: str | None = None


def verify() -> None:
    """Raise Tainted if learner code left anything behind (called after every call of learner code)."""
    global tainted
    left = interpreter.changes() if interpreter is not None else []
    if left:
        tainted = message(left)
        raise Tainted(tainted)


class Tainted(Exception):
    pass


def message(changes: list[str]) -> str:
    return ("your code " + "; ".join(dict.fromkeys(changes)) + ". Code planted in the grading process could change "
            "a check's result after it was decided, so the grading stopped here and the remaining checks count as "
            "failed. A device fix never needs any of this: remove it.")
