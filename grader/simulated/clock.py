"""The virtual clock: a host clock and one queue per device, both in microseconds.

Every device op costs the host a launch (``LAUNCH_US``) and the device a kernel (``KERNEL_US``); the
device starts an op no earlier than the host launched it.  A sync point moves the host clock forward to
the device's completion time.  This is what makes asynchrony visible without a GPU: timing with
``time.perf_counter`` and no sync measures launches, events measure the device, and non_blocking copies
land only when the device has run them.

Copies in flight
----------------
* device -> pinned host, ``non_blocking=True``: the host buffer keeps its old contents until a sync point
  at or after the copy's completion time (``pending_d2h``).
* pinned host -> device, ``non_blocking=True``: the device reads the pinned source when it runs the copy,
  not when the host queued it (``pending_h2d``).  The simulator executes ops eagerly, so the copy is
  applied just before the next op on that device (in stream order the copy comes first) and at sync
  points.  Until the device clock passes the copy's completion time, a host write to the source is a
  race: the device sees the new (or torn) data, and the recorder notes a ``RaceRecord``.
* pageable sources are staged by CUDA before ``copy_`` returns: the copy is immediate, and with
  ``non_blocking=False`` the host also waits for the device (a sync point).

Streams
-------
Each stream has its own queue: an op starts when the host launched it and its stream's earlier work ended.
``clock.device[i]`` is when device ``i`` has run everything (the last of its streams). A stream's work is
ordered after another stream's only by a wait: ``wait_stream``, ``wait_event``, or the host's own waits
(``synchronize``, an event's ``synchronize``, a query that answered True), which every later launch inherits.
``known`` keeps, per stream and for the host, up to which time of each other stream it has waited
(a vector clock); races.py reads it to decide what a read on one stream may see of another's writes.
Implicit sync points (``item()``, a blocking copy, ``nonzero``) wait for the current stream only, as
CUDA's ``cudaStreamSynchronize`` of the current stream; ``torch.sim.synchronize()`` waits for every stream.
"""

from __future__ import annotations

import contextlib
import sys
import threading

import torch

from . import asserts, config
from .instruments import SyncRecord
from .instruments import note_host_read as _note_host_read
from .instruments import note_race as _note_race
from .instruments import recorders as _recorders


class Clock:
    def __init__(self):
        self.reset(2)

    def reset(self, count):
        self.host = 0.0
        self.device = [0.0] * count
        self.pending = []  # D2H: (complete_time, device_index, dst_cpu, src_snapshot)
        self.pending_h2d = []  # H2D: [complete_time, device_index, dst_data, src_pinned, src_version, applied]
        # Streams (see "Streams" above). Until a side stream is made (``side``), each device's default stream is
        # its whole queue and nothing below is kept.
        self.side = False
        self.current = {}  # device index -> current stream id (0: the default stream)
        self.streams = {}  # (device index, stream id) -> when that stream's queue is empty
        self.known = {}  # stream key -> {stream key: time}: the work of other streams this stream waited for
        self.host_known = {}  # the same for the host: what its waits (syncs, queries) made it wait for


clock = Clock()
_tls = threading.local()


class KernelCost:
    """What one kernel costs the device on the virtual clock, where a check sets it (``kernels_cost``)."""

    def __init__(self):
        self.kernel_us = None  # None: config.KERNEL_US


kernel_cost = KernelCost()


@contextlib.contextmanager
def kernels_cost(kernel_us: float):
    """Inside, each kernel launched costs the device ``kernel_us`` on the virtual clock (time_matmul makes the
    products longer than any real time a call may last, so that only virtual time can measure them)."""
    kernel_cost.kernel_us = kernel_us
    try:
        yield
    finally:
        kernel_cost.kernel_us = None


def read_host_clock() -> float:
    """A host clock read that a check answers from the virtual clock: the host's time in seconds. Each read costs
    the host ``QUERY_US``, so that a loop waiting for the clock to move ends, as it does on a real machine."""
    clock.host += config.QUERY_US
    return clock.host / 1e6


# torch.cuda.set_sync_debug_mode: 0 off, 1 warn, 2 error.  CUDA checks in stream_synchronize and
# memcpy_and_sync (implicit syncs: item, blocking copies, nonzero, ...), not in an explicit
# torch.cuda.synchronize() or Event.synchronize().
sync_debug_mode = [0]
_EXPLICIT = ("synchronize", "event")


def _sync_debug(label):
    if sync_debug_mode[0] and label not in _EXPLICIT:
        msg = f"called a synchronizing {config.DEVICE_TYPE.upper()} operation"
        if sync_debug_mode[0] >= 2:
            raise RuntimeError(msg)
        import warnings

        warnings.warn(msg, stacklevel=4)


def host_time() -> float:
    """Virtual host clock, in milliseconds."""
    return clock.host / 1000.0


def device_time(device=None) -> float:
    """Virtual time (ms) at which the device's queue will be empty."""
    return clock.device[config.index(device)] / 1000.0


def stream_key(idx, sid=None):
    """(device index, stream id) of stream ``sid`` of device ``idx`` (None: its current stream)."""
    return (idx, clock.current.get(idx, 0) if sid is None else sid)


def stream_end(idx, sid=None) -> float:
    """When the queue of stream ``sid`` of device ``idx`` (None: the current stream) is empty."""
    c = clock
    if not c.side:
        return c.device[idx]
    return c.streams.get(stream_key(idx, sid), 0.0)


def set_stream_end(idx, sid, t) -> None:
    c = clock
    if not c.side:
        c.device[idx] = t
        return
    c.streams[stream_key(idx, sid)] = t
    if t > c.device[idx]:
        c.device[idx] = t


def start_side_streams() -> None:
    """A side stream was made: from now on each stream keeps its own queue (the default streams' queues are
    the devices' queues so far)."""
    c = clock
    if c.side:
        return
    c.side = True
    for i, t in enumerate(c.device):
        c.streams[(i, 0)] = t


def merge_known(into: dict, other: dict) -> None:
    for k, t in other.items():
        if t > into.get(k, -1.0):
            into[k] = t


def host_waited(key, t) -> None:
    """The host waited for stream ``key`` up to time ``t`` (so it knows what that stream had waited for)."""
    c = clock
    if not c.side:
        return
    if t > c.host_known.get(key, -1.0):
        c.host_known[key] = t
    known = c.known.get(key)
    if known:
        merge_known(c.host_known, known)


def launch(idx, cost=None, name=None):
    c = clock
    c.host += config.LAUNCH_US
    if cost is None:
        cost = config.KERNEL_US if kernel_cost.kernel_us is None else kernel_cost.kernel_us
    if c.side:
        key = (idx, c.current.get(idx, 0))
        d = c.streams.get(key, 0.0)
        end = c.streams[key] = (c.host if c.host > d else d) + cost
        if end > c.device[idx]:
            c.device[idx] = end
    else:
        d = c.device[idx]
        c.device[idx] = (c.host if c.host > d else d) + cost
    if _recorders:
        for rec in _recorders:
            rec.launches += 1
            if name is not None:
                rec.ops[name] = rec.ops.get(name, 0) + 1


def copy_cost(nbytes, bw=None):
    return config.COPY_FIXED_US + nbytes / (config.COPY_BYTES_PER_US if bw is None else bw)


# ----------------------------------------------------------------- copies in flight
def queue_h2d(idx, dst_data, src):
    """A non_blocking copy from pinned ``src`` into the device data ``dst_data`` was launched.  Host writes
    to ``src`` are noticed through its version counter (every in-place torch op on it or on a view of it
    bumps it; writes through ``.numpy()`` or ``.data`` are not seen, nor any write to an inference tensor,
    which has no version counter: a pinned batch made under torch.inference_mode())."""
    clock.pending_h2d.append([stream_end(idx), idx, dst_data, src, _version(src), False])


def _version(t):
    return None if getattr(t, "is_inference", bool)() else t._version


#: References to a copy's source while settle_h2d looks at it: its entry, the loop's name, getrefcount's argument.
_OWN_REFERENCES = 3


def settle_h2d(idx=None):
    """Run the queued host->device copies that the device has not run yet, and look for host writes to the
    sources of copies still in flight (races). A copy run whose source nothing else holds (the last batch of a
    loop, once its name is bound to the next) is dropped at once: no write can reach that source any more, and
    keeping it would make every later operation look at every copy of a loop that never waits."""
    c = clock
    keep = []
    for item in c.pending_h2d:
        t, i, dst, src, version, applied = item
        changed = _version(src) != version
        if changed and (not applied or t > c.host):
            # the host wrote to the source before the device had finished the copy: a race
            _note_race(config.dev(i), src.numel() * src.element_size())
        if changed or not applied:
            with torch.no_grad():
                dst.copy_(src)  # the device reads the source as it is now
            item[4] = _version(src)
            item[5] = True
        if t > c.host and not (sys.getrefcount(src) <= _OWN_REFERENCES and _sole_view(src)):
            keep.append(item)
    c.pending_h2d = keep


def _sole_view(t) -> bool:
    """No other tensor (a view) shares `t`'s storage: the storage's users are `t` and the reference asked here."""
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata) <= 2


def apply_pending():
    c = clock
    if c.pending_h2d:
        settle_h2d()
    if not c.pending:
        return
    keep = []
    for item in c.pending:
        t, _idx, dst, src = item
        if t <= c.host:
            with torch.no_grad():
                dst.copy_(src)
        else:
            keep.append(item)
    c.pending = keep


def reached(t) -> bool:
    """A query of a stream or an event: whether the device has reached virtual time ``t``. Asking costs the host ``QUERY_US``, as cudaStreamQuery and cudaEventQuery cost the host a
    call into the driver, so a loop of queries ends as it does on a GPU. A yes is no sync point, but the copies in
    flight that the device has finished by then have landed."""
    c = clock
    if c.host >= t:
        apply_pending()
        return True
    c.host += config.QUERY_US
    return False


# ----------------------------------------------------------------- sync points
def sync(reason, idx=None, sid=None):
    """Host waits for device ``idx`` (all devices when None): for its stream ``sid``, else for every stream of it
    where ``reason`` is an explicit ``synchronize``, else for its current stream (an implicit sync point).
    Recorded once per outermost user-visible reason (the syncs nested inside e.g. print are folded into it)."""
    c = clock
    if asserts.broken:
        asserts.check(idx)  # the wait for a device is where CUDA reports what its kernels asserted
    if sync_debug_mode[0]:
        outer = getattr(_tls, "reason", None)
        if outer is None or not _tls.recorded:
            _sync_debug(outer or reason)
    if c.pending_h2d:
        settle_h2d()  # races are judged at the host time before the wait
    if idx is None:
        t = max(c.device) if c.device else c.host
        waited = list(c.streams)
    elif sid is None and reason in _EXPLICIT:
        t = c.device[idx]
        waited = [k for k in c.streams if k[0] == idx]
    else:
        t = stream_end(idx, sid)
        waited = [stream_key(idx, sid)]
    if c.side:
        for k in waited:
            host_waited(k, c.streams.get(k, 0.0))
    if t > c.host:
        c.host = t
    apply_pending()
    outer = getattr(_tls, "reason", None)
    if outer is not None:
        if _tls.recorded:
            return
        _tls.recorded = True
        reason = outer
    if _recorders:
        r = SyncRecord(reason, None if idx is None else f"{config.DEVICE_TYPE}:{idx}")
        for rec in _recorders:
            rec.syncs.append(r)


def wait_until(t, reason, device):
    """Host waits until virtual time ``t`` (an event); recorded as a sync point."""
    c = clock
    if c.pending_h2d:
        settle_h2d()
    if c.host < t:
        c.host = t
    apply_pending()
    if _recorders:
        r = SyncRecord(reason, device)
        for rec in _recorders:
            rec.syncs.append(r)


@contextlib.contextmanager
def reason(label, read=None, idx=None):
    """Label the sync points that happen inside (outermost label wins).  ``read`` names a host read of a
    device value (``item``, ``bool``, ...), recorded once for the outermost read."""
    if getattr(_tls, "reason", None) is not None:
        yield
        return
    if read is not None and _recorders:
        _note_host_read(read, config.dev(idx if idx is not None else config.CURRENT[0]))
    _tls.reason = label
    _tls.recorded = False
    try:
        yield
    finally:
        _tls.reason = None
