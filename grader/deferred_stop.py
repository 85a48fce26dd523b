"""Stop running code from a signal handler without raising where the signal happened to land.

A handler that raises does so at whatever bytecode the main thread runs when the signal comes, and with the
simulated accelerator that may be Python that C++ cannot unwind: its device guard (torch._C._acc.DeviceGuard's
`type_`, which C++ calls from noexcept functions such as exchangeStream) or one of its kernels during a backward
(the engine throws with Python's error indicator still set and restores the stream through that guard), and the
process ends with "terminate called without an active exception". A finalizer (a tensor freed, its memory
given back) prints the exception and drops it, so the stop is lost. So the handler calls `raise_at_next_line`
instead: the exception is raised by a trace function at the next line of the chosen code (the learner's),
a statement where any error of its own could come from, and again at each line after that (an `except:` that
swallows it does not keep the code running) until `cancel`."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Callable

_armed: list = []  # the local trace function while armed (at most one)


def raise_at_next_line(make_exception: Callable[[], BaseException], is_chosen: Callable[[str], bool],
                       frame: FrameType | None) -> None:
    """From the next line on, raise `make_exception()` in frames of files for which `is_chosen(filename)`: those
    running now (`frame`, the handler's, and its callers) and those called later. Main thread only."""
    chosen: dict[str, bool] = {}

    def chosen_file(code) -> bool:
        name = code.co_filename
        if name not in chosen:
            chosen[name] = is_chosen(name)
        return chosen[name]

    def local(frame, event, arg):
        if event == "line" and not _in_backward():  # the learner's hook or dispatch: after the backward
            raise make_exception()
        return local

    def calls(frame, event, arg):  # every new frame: traced only if it is the chosen code's
        return local if chosen_file(frame.f_code) else None

    _armed[:] = [local]
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
        sys.settrace(None)
        _armed.clear()


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
