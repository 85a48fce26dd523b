"""Streams and events of the simulated device on the virtual clock.

``torch.sim.Stream`` / ``torch.sim.Event`` and ``torch.Stream(device='sim')`` / ``torch.Event(device='sim')``
(the device-generic classes; torch.Stream and torch.Event are replaced by stand-ins that return these for
a ``sim`` device, and the real classes otherwise) are subclasses of torch.Stream / torch.Event, so
``isinstance`` checks and ``torch.accelerator.set_stream`` accept them.  The Python backend's C++ device
guard would hand out no-op streams on device 0 and events whose ``synchronize``/``elapsed_time`` raise
("Backend doesn't support ..."), hence Python implementations here.

Each stream has its own queue on the virtual clock (clock.py, "Streams"): work on a side stream is ordered
after another stream's only by ``wait_stream``, ``wait_event`` or a wait of the host, and races.py shows what
a read that no wait orders sees (NaN), and what a block freed while another stream uses it does.
"""

from __future__ import annotations

import itertools

import torch

from . import config
from .clock import (clock, host_waited, merge_known, reached, set_stream_end, start_side_streams,
                    stream_end, sync, wait_until)
from .config import DEVICE_TYPE

_CStream = torch._C.Stream
_CEvent = torch._C.Event


class _GpuTrace:
    """The simulator's torch.cuda._gpu_trace, for waits on one stream or one event: CUDA reports each from C++,
    whichever Python class made the stream or event (torch.cuda.Stream, torch.Stream, the one
    torch.accelerator.current_stream() returns); the simulator's streams and events, which serve all of those,
    report theirs here (grader.engine.instruments counts them)."""

    def __init__(self):
        self.stream_synchronization, self.event_synchronization = [], []

    def register_callback_for_stream_synchronization(self, cb) -> None:
        self.stream_synchronization.append(cb)

    def register_callback_for_event_synchronization(self, cb) -> None:
        self.event_synchronization.append(cb)


gpu_trace = _GpuTrace()
_ids = itertools.count(1)
_current: dict[int, "SimStream"] = {}  # device index -> current stream
_defaults: dict[int, "SimStream"] = {}


class SimStream(_CStream):
    """A stream of a simulated device (mirror of torch.cuda.Stream / torch.Stream)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        idx = config.index(device)
        config.check_index(idx)
        s = _CStream.__new__(cls, device=DEVICE_TYPE, priority=priority)
        s._idx = idx
        s._sid = kwargs.get("_sid", None)
        if s._sid is None:
            s._sid = next(_ids)
            start_side_streams()
        s._prev = []
        return s

    def __init__(self, device=None, priority=0, **kwargs):
        pass

    @property
    def device(self):
        return config.dev(self._idx)

    @property
    def device_index(self):
        return self._idx

    @property
    def stream_id(self):
        return self._sid

    @property
    def _key(self):
        return (self._idx, self._sid)

    def query(self):
        t = stream_end(self._idx, self._sid)
        if reached(t):
            host_waited(self._key, t)
            return True
        return False

    def synchronize(self):
        for cb in gpu_trace.stream_synchronization:
            cb(self._sid)
        sync("synchronize", self._idx, self._sid)

    def _waits_for(self, key, t, known) -> None:
        """This stream's later work runs after stream ``key``'s work up to time ``t`` (and what that had waited
        for, ``known``)."""
        if t > stream_end(self._idx, self._sid):
            set_stream_end(self._idx, self._sid, t)
        if clock.side and key != self._key:
            mine = clock.known.setdefault(self._key, {})
            merge_known(mine, clock.host_known)  # the host's waits came before this call
            merge_known(mine, known)
            if t > mine.get(key, -1.0):
                mine[key] = t

    def wait_event(self, event):
        if event._time is not None:
            self._waits_for(event._key, event._time, event._known)

    def wait_stream(self, stream):
        self._waits_for(stream._key, stream_end(stream._idx, stream._sid), clock.known.get(stream._key, {}))

    def record_event(self, event=None):
        event = event if event is not None else SimEvent()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, SimStream) and (self._idx, self._sid) == (other._idx, other._sid)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((DEVICE_TYPE, self._idx, self._sid))

    def __repr__(self):
        return f"torch.Stream device_type={DEVICE_TYPE}, device_index={self._idx}, stream_id={self._sid}"

    def __enter__(self):
        # as THPStream_enter: the stream's device becomes current too, and both are restored on exit
        self._prev.append((config.CURRENT[0], current_stream(self._idx)))
        config.CURRENT[0] = self._idx
        set_stream(self)
        return self

    def __exit__(self, *exc):
        device, stream = self._prev.pop()
        set_stream(stream)
        config.CURRENT[0] = device
        return False


class SimEvent(_CEvent):
    """An event of a simulated device (mirror of torch.cuda.Event; also what torch.Event(device='sim')
    returns).  Times are virtual: ``elapsed_time`` measures the device's queue, not Python."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, *, device=None, **kwargs):
        e = _CEvent.__new__(cls, device=DEVICE_TYPE, enable_timing=bool(enable_timing))
        e.enable_timing = bool(enable_timing)
        e._time = None
        e._key = None  # (device index, stream id) of the stream it was recorded on
        e._known = {}  # what that stream had waited for when it was recorded
        e._idx = None if device is None else config.index(device)
        return e

    def __init__(self, *args, **kwargs):
        pass

    @property
    def device(self):
        if self._idx is None:  # not recorded yet: torch.cuda.Event has no device, torch.Event only its type
            return torch.device(DEVICE_TYPE) if getattr(self, "_generic", False) else None
        return config.dev(self._idx)

    def record(self, stream=None):
        if stream is None:
            stream = current_stream(self._idx)
        idx = getattr(stream, "_idx", config.CURRENT[0])
        self._idx = idx
        c = clock
        self._key = (idx, getattr(stream, "_sid", 0))
        self._time = max(c.host, stream_end(*self._key))
        if c.side:
            self._known = dict(c.known.get(self._key, {}))
            merge_known(self._known, c.host_known)

    def _host_waited(self):
        host_waited(self._key, self._time)
        if clock.side:
            merge_known(clock.host_known, self._known)

    def query(self):
        if self._time is None:
            return True
        if reached(self._time):
            self._host_waited()
            return True
        return False

    def synchronize(self):
        if self._time is None:
            return  # never recorded: CUDA neither waits nor reports it
        for cb in gpu_trace.event_synchronization:
            cb(id(self))
        self._host_waited()
        wait_until(self._time, "event", f"{DEVICE_TYPE}:{self._idx}")

    def wait(self, stream=None):
        (stream if stream is not None else current_stream()).wait_event(self)

    def elapsed_time(self, end_event):
        # CUDAEvent::elapsed_time: TORCH_CHECK_VALUE (ValueError) for the first two, TORCH_CHECK for the last
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return (end_event._time - self._time) / 1000.0

    def __repr__(self):
        return f"torch.Event device_type={DEVICE_TYPE}, device_index={self._idx}, recorded={self._time is not None}"


def default_stream(device=None):
    idx = config.index(device)
    config.check_index(idx)
    s = _defaults.get(idx)
    if s is None:
        s = _defaults[idx] = SimStream(idx, _sid=0)
    return s


def current_stream(device=None):
    idx = config.index(device)
    s = _current.get(idx)
    return s if s is not None else default_stream(idx)


def set_stream(stream):
    if stream is None:
        return
    if not isinstance(stream, SimStream):
        raise RuntimeError(f"expected a stream of the {DEVICE_TYPE} device, got {stream!r}")
    _current[stream._idx] = stream
    clock.current[stream._idx] = stream._sid


class _StreamContext:
    """torch.sim.stream(s): make ``s`` current inside (None: no-op)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        # as torch.cuda.StreamContext: torch.cuda.set_stream makes the stream's device current too
        if self.stream is not None:
            self.prev = (config.CURRENT[0], current_stream(self.stream._idx))
            config.CURRENT[0] = self.stream._idx
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            device, stream = self.prev
            set_stream(stream)
            config.CURRENT[0] = device
        return False


# ---- torch.Stream / torch.Event stand-ins -------------------------------------------------------
def _is_sim(device):
    if device is None:
        return False
    if isinstance(device, int):  # an index of the current accelerator, as torch.device(0) is
        return _accelerator_is_sim()
    return torch.device(device).type == DEVICE_TYPE


class _StreamMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _CStream)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _CStream)

    def __call__(cls, device=None, *, priority=0, **kw):
        if _is_sim(device) or (device is None and _accelerator_is_sim()):
            return SimStream(device, priority)
        return _CStream(device=device, priority=priority, **kw)


class _EventMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _CEvent)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _CEvent)

    def __call__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        if _is_sim(device) or (device is None and _accelerator_is_sim()):
            # THPEvent_pynew keeps the device's type only (c10::Event(device->type(), ...)): the event belongs
            # to the device of the stream it is recorded on, without a stream the current device's
            e = SimEvent(enable_timing, blocking, interprocess)
            e._generic = True
            return e
        return _CEvent(device=device, enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


def _accelerator_is_sim():
    acc = torch._C._accelerator_getAccelerator()
    return acc is not None and acc.type == DEVICE_TYPE


class Stream(_CStream, metaclass=_StreamMeta):
    __doc__ = _CStream.__doc__


class Event(_CEvent, metaclass=_EventMeta):
    __doc__ = _CEvent.__doc__


def install():
    torch.Stream = Stream
    torch.Event = Event


def reset():
    _current.clear()
    _defaults.clear()
