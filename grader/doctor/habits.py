"""Run-time habits of a script that the course teaches against, watched beside the dispatcher: host clocks read
around device work that nothing waited for, `empty_cache()` in a loop, `torch.load` of device tensors without
`map_location`, and autograd graphs carried from one iteration of a loop into the next.

A clock read is the learner's only when the script's own line calls it (torch's and the grader's reads pass
by). A synchronize followed by a clock read, with no device work between them, is timing (the course's way to
time): grader.doctor.analyze does not call it a stray synchronisation."""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass

import torch

from grader.engine.instruments import Line, learner_line

CLOCKS = ("perf_counter", "time", "monotonic", "perf_counter_ns", "time_ns", "monotonic_ns")


@dataclass
class ClockRead:
    context: tuple
    line: Line | None
    kernels: int  # device operations run before it
    kernels_at_wait: int  # of those, run before the last wait for the device


@dataclass
class Loaded:
    line: Line | None
    devices: list  # where the loaded tensors were put (not the CPU)
    has_step: bool  # an optimizer's state with `step` tensors among them


def _kernels(rec) -> int:
    m = rec.measurement
    return m.kernels if m is not None else 0


def waited(rec, line=None, sync: bool = False) -> None:
    """The host waited for the device (a synchronize, a host read, a blocking copy back)."""
    rec.kernels_at_wait = _kernels(rec)
    if sync:
        rec.last_sync = (line, rec.kernels_at_wait)


def watch_clocks(rec, script: str):
    undo = []
    for name in CLOCKS:
        original = getattr(time, name)

        def clock(*args, _original=original):
            value = _original(*args)
            if sys._getframe(1).f_code.co_filename == script:
                try:
                    kernels = _kernels(rec)
                    line = learner_line()
                    rec.clocks.append(ClockRead(rec.step, line, kernels, rec.kernels_at_wait))
                    if rec.last_sync and rec.last_sync[1] == kernels and rec.last_sync[0] is not None:
                        rec.timing_syncs.add(rec.last_sync[0])  # a synchronize that brackets this clock
                except Exception:
                    pass
            return value

        functools.update_wrapper(clock, original)
        setattr(time, name, clock)
        undo.append((time, name, original))
    return undo


def watch_empty_cache(rec):
    owners = [torch.accelerator, getattr(torch.accelerator, "memory", None), getattr(torch, rec.device.type, None),
              torch.cuda]
    undo = []
    for owner in owners:
        original = getattr(owner, "empty_cache", None) if owner is not None else None
        if original is None or (owner, "empty_cache", original) in undo:
            continue

        def empty_cache(*args, _original=original, **kwargs):
            try:
                line = learner_line()
                if line is not None and not rec.inside_empty_cache:
                    rec.empty_caches.append((rec.step, line))
            except Exception:
                pass
            rec.inside_empty_cache += 1
            try:
                return _original(*args, **kwargs)
            finally:
                rec.inside_empty_cache -= 1

        functools.update_wrapper(empty_cache, original)
        owner.empty_cache = empty_cache
        undo.append((owner, "empty_cache", original))
    return undo


def watch_load(rec):
    original = torch.load

    @functools.wraps(original)
    def load(f, *args, **kwargs):
        out = original(f, *args, **kwargs)
        try:
            if not args and kwargs.get("map_location") is None:
                line = learner_line()
                if line is not None:
                    devices, has_step = set(), False
                    for path, t in _tensors(out):
                        if t.device.type != "cpu":
                            devices.add(str(t.device))
                            has_step = has_step or path == "step"
                    if devices:
                        rec.loads.append(Loaded(line, sorted(devices), has_step))
        except Exception:
            pass
        return out

    torch.load = load
    return [(torch, "load", original)]


def _tensors(tree, key="", depth=0):
    if depth > 8:
        return
    if isinstance(tree, torch.Tensor):
        yield key, tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _tensors(v, k if isinstance(k, str) else key, depth + 1)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _tensors(v, key, depth + 1)


def carried(rec, args) -> None:
    """An operation of iteration k of a loop that takes a tensor with an autograd graph made in an earlier
    iteration of that loop: the graph of every iteration is kept alive (`total += loss`, a hidden state not
    detached). Called for device operations with grad mode on, outside the backward."""
    now = rec.loops.context
    if not now:
        return
    current = dict(now)
    for t in args:
        if not isinstance(t, torch.Tensor):
            continue
        h = rec.held.get(id(t))
        if h is None or not h.step or h.step == now:
            continue
        for uid, iteration in h.step:
            if current.get(uid, iteration) > iteration and rec.loops.seen[uid].is_step and t.grad_fn is not None:
                rec.carries.append((now, learner_line(), h.line, uid))
                return


def kept_at_exit(rec, holder_line):
    """When a loop of steps ends: the device tensors with an autograd graph made in its iterations before the last
    that are still alive (a list of losses), by the line that made them, with the line that keeps them
    (`holder_line(tensor, scopes)`). Returns the Loops.on_leave callback."""
    def on_leave(loop, frame):
        lines = {}
        for h in list(rec.held.values()):
            made = dict(h.step).get(loop.uid)
            if made is None or made >= loop.iteration or h.line is None:
                continue
            t = h.ref()
            if t is None or t.grad_fn is None:
                continue
            entry = lines.setdefault(h.line, [set(), t, 0])
            entry[0].add(made)
            entry[2] += h.nbytes
        for line, (iterations, sample, nbytes) in lines.items():
            if len(iterations) >= 2:
                holder = holder_line(sample, [frame.f_locals, frame.f_globals])
                rec.kept.append((loop.line, line, holder, nbytes))
    return on_leave
