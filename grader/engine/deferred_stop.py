"""Stop running code from a signal handler without raising where the signal happened to land.

A handler that raises does so at whatever bytecode the main thread runs when the signal comes, and with the
simulated accelerator that may be Python that C++ cannot unwind: its device guard (torch._C._acc.DeviceGuard's
`type_`, which C++ calls from noexcept functions such as exchangeStream) or one of its kernels during a backward
(the engine throws with Python's error indicator still set and restores the stream through that guard), and the
process ends with "terminate called without an active exception". A finalizer (a tensor freed, its memory
given back) prints the exception and drops it, so the stop is lost. So the handler calls `raise_at_next_line`
instead: the exception is raised by a trace function at the next line of the chosen code (the learner's),
a statement where any error of its own could come from (and, if asked, again at each line after that: an
`except:` that swallows it does not keep the code running) until `cancel`."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Callable

_armed: list = []  # while armed: the trace function that was set before (a debugger's, coverage's)


def raise_at_next_line(make_exception: Callable[[], BaseException], is_chosen: Callable[[str], bool],
                       frame: FrameType | None, again: bool = True) -> None:
    """At the next line of a file for which `is_chosen(filename)`, in frames running now (`frame`, the handler's,
    and its callers) or called later, raise `make_exception()`; with `again`, at each line after that too (else
    it is cancelled once raised). Main thread only."""
    chosen: dict[str, bool] = {}

    def chosen_file(code) -> bool:
        name = code.co_filename
        if name not in chosen:
            chosen[name] = is_chosen(name)
        return chosen[name]

    def local(frame, event, arg):
        if event == "line" and _armed and not _in_backward():  # the learner's hook or dispatch: after the backward
            if not again:
                cancel()
            raise make_exception()
        return local

    def calls(frame, event, arg):  # every new frame: traced only if it is the chosen code's
        return local if chosen_file(frame.f_code) else None

    if not _armed:
        _armed.append(sys.gettrace())
    while frame is not None:
        if chosen_file(frame.f_code):
            frame.f_trace, frame.f_trace_lines = local, True
        frame = frame.f_back
    sys.settrace(calls)


def _in_backward() -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and torch._C._current_graph_task_id() != -1


def cancel() -> None:
    """No more raising (the code has stopped)."""
    if _armed:
        sys.settrace(_armed.pop())


def learners_code(script: str) -> Callable[[str], bool]:
    """Files of the learner's own code: the script and the files of its folder (its own modules), not an
    environment inside it nor the grader (a script at the course's root)."""
    import os

    import grader

    folder = os.path.dirname(os.path.abspath(script)) + os.sep
    ours = os.path.dirname(os.path.abspath(grader.__file__)) + os.sep

    def chosen(filename: str) -> bool:
        return filename == script or (filename.startswith(folder) and not filename.startswith(ours)
                                      and "-packages" + os.sep not in filename)

    return chosen


def libraries_but(*modules: str) -> Callable[[str], bool]:
    """Files of libraries (not the standard library's) outside the packages of these modules' files
    (`torch.__file__`, `grader.__file__`...), and the learner's own."""
    import os

    def package(module_file: str) -> str:
        folder = os.path.dirname(os.path.abspath(module_file))
        while os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
            folder = os.path.dirname(folder)
        return folder + os.sep

    excluded = tuple(package(m) for m in modules)
    stdlib = os.path.dirname(os.path.abspath(os.__file__)) + os.sep

    def chosen(filename: str) -> bool:
        path = os.path.abspath(filename)
        if filename.startswith("<") or path.startswith(excluded):
            return False
        return not path.startswith(stdlib) or "-packages" + os.sep in path

    return chosen
