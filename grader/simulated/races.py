"""Races between streams, shown deterministically on the virtual clock.

The simulator computes every op when it is launched, so a race cannot happen by itself: this module decides,
from the order the streams' waits give (clock.py, "Streams"), what a GPU could have computed, and makes the
result wrong where a GPU could have made it wrong. Nothing here runs until a side stream is made
(``clock.side``).

* **A read before the write** (``with torch.Stream(...)`` work read on another stream without a wait): an op
  on stream T that reads a tensor last written by an op of stream S is ordered after that write only if T (or
  the host, before launching the op) waited for S up to the write's end. Otherwise its outputs, and a host
  read's result, are poisoned: NaN (an integer type's far end), a value no right result has, where a GPU would
  read whatever the memory held before the write landed (on an unlucky draw the right answer).
* **A block reused while in use** (a tensor freed while another stream still uses it, without
  ``record_stream``): the caching allocator hands a freed block to the next request of the stream its segment
  belongs to at once. If an op of another stream that used the block is not known (by that stream's waits or
  the host's) to have ended, the new owner's writes can land before that op reads: the op's outputs are
  poisoned, and so are the outputs of every op logged after it that read them.
  ``t.record_stream(s)`` keeps the block from the pool until the host sees stream ``s``'s work at the free
  ended, as CUDA's allocator does with an event.

Equal host and device clocks never hide a race here (a race is one whichever op the GPU runs first); only a
wait orders two streams.
"""

from __future__ import annotations

import torch

from . import config
from .clock import clock, merge_known, stream_key
from .instruments import note_stream_race

# ops logged while some stream's knowledge may still lack them, in launch order
_log: list["_Op"] = []
_cross: list["_Op"] = []  # those of _log that used a block of another stream's segment (what a reuse may overtake)
_writes: dict[int, tuple] = {}  # CPU storage key -> (stream key, end) of the last op that wrote it
_deferred: list[tuple] = []  # frees that record_stream delays: (device index, block, {stream key: time})
_LOG_LIMIT = 4096
_prune_at = [64]


class _Op:
    __slots__ = ("key", "end", "reads", "hold", "ranges", "outs")

    def __init__(self, key, end, reads, hold, ranges, outs):
        self.key, self.end, self.reads, self.hold, self.ranges, self.outs = key, end, reads, hold, ranges, outs


def reset() -> None:
    _prune_at[0] = 64
    _log.clear()
    _cross.clear()
    _writes.clear()
    _deferred.clear()


def poison(t: torch.Tensor) -> None:
    """Fill ``t`` (CPU data) with a value no right result has: NaN, an integer type's far end (bool keeps its
    contents: it has no such value)."""
    with torch.no_grad():
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype is not torch.bool:
            info = torch.iinfo(t.dtype)
            t.fill_(info.min if info.min < 0 else info.max)


def _knowledge(key) -> dict:
    """What stream ``key``'s next op is ordered after: its own waits and the host's (a launch comes after them)."""
    mine = clock.known.setdefault(key, {})
    merge_known(mine, clock.host_known)
    return mine


def _storage_key(t):
    mem = getattr(t, "_mem", None)
    return getattr(mem, "key", None)


def op(idx, end, reads, outs) -> bool:
    """An op just launched on the current stream of device ``idx`` and ending at ``end`` read the device tensors
    ``reads`` and wrote ``outs``. Returns whether it read a write that no wait ordered before it (its device
    outputs are then poisoned here; a host result is the caller's to poison)."""
    key = stream_key(idx)
    known = _knowledge(key)
    stale = None
    read_keys, ranges = [], []
    for t in reads:
        k = _storage_key(t)
        if k is None:
            continue
        read_keys.append(k)
        w = _writes.get(k)
        if w is not None and w[0] != key and known.get(w[0], -1.0) < w[1] and stale is None:
            stale = w[0]
        _note_range(t, key, ranges)
    out_data = []
    for t in outs:
        k = _storage_key(t)
        if k is None:
            continue
        _note_range(t, key, ranges)
        out_data.append(t._data)
        _writes[k] = (key, end)
    if stale is not None:
        for d in out_data:
            poison(d)
        note_stream_race("read before the write", config.dev(idx), stale[1], key[1])
    entry = _Op(key, end, frozenset(read_keys), tuple(t._data for t in reads if hasattr(t, "_data")),
                tuple(ranges), tuple(out_data))
    _log.append(entry)
    if ranges:
        _cross.append(entry)
    if len(_log) > _prune_at[0]:
        _forget_known()
        _prune_at[0] = len(_log) + 64  # what the host has not waited for stays: look again 64 ops later
    return stale is not None


def _note_range(t, key, ranges):
    """A use of a block of another stream's segment: what a reuse of the block must not overtake."""
    block = getattr(getattr(t, "_mem", None), "block", None)
    if block is not None and block.stream != key[1]:
        ranges.append((block.addr, block.addr + block.size))


def _forget_known() -> None:
    """Drop what the host has waited for: every later op is ordered after it."""
    host = clock.host_known
    _log[:] = [o for o in _log if host.get(o.key, -1.0) < o.end][-_LOG_LIMIT:]
    kept = set(map(id, _log))
    _cross[:] = [o for o in _cross if id(o) in kept and o.ranges]
    for k in [k for k, (s, end) in _writes.items() if host.get(s, -1.0) >= end]:
        del _writes[k]


def record_stream(ref, stream) -> None:
    """``t.record_stream(stream)``: the block of ``t``'s storage (``ref``) is kept until ``stream``'s work at
    the free has ended."""
    if ref.streams is None:
        ref.streams = set()
    ref.streams.add(stream._sid)


def free(allocator, ref) -> bool:
    """The last tensor of ``ref``'s storage died. Returns False where the block must wait for streams named by
    record_stream (kept here until the host sees them reach the free)."""
    block = ref.block
    if block is None or not ref.streams or not clock.side:
        return True
    waits = {}
    for sid in ref.streams:
        if sid != block.stream:
            key = (ref.idx, sid)
            waits[key] = clock.streams.get(key, 0.0)
    if not waits:
        return True
    allocator.hold(block)
    _deferred.append((allocator, block, waits))
    return False


def process_deferred() -> None:
    """CUDA's process_events: a delayed free whose streams' work the device has run by now (the host clock) is
    released; the host then knows that work ended."""
    if not _deferred:
        return
    keep = []
    for allocator, block, waits in _deferred:
        if all(clock.host >= t for t in waits.values()):
            for key, t in waits.items():
                if t > clock.host_known.get(key, -1.0):
                    clock.host_known[key] = t
            allocator.unhold(block)
        else:
            keep.append((allocator, block, waits))
    _deferred[:] = keep


def allocated(idx, block) -> None:
    """``block`` was just handed to a new tensor on the current stream of device ``idx``: an op of another
    stream that used its memory and that this stream's next op is not ordered after may see the new owner's
    data."""
    if block is None or not _cross:
        return
    key = stream_key(idx)
    known = _knowledge(key)
    lo, hi = block.addr, block.addr + block.size
    for o in list(_cross):
        if o.key == key or not o.ranges or known.get(o.key, -1.0) >= o.end:
            continue
        if any(a < hi and lo < b for a, b in o.ranges):
            o.ranges = ()
            note_stream_race("reused while in use", config.dev(idx), key[1], o.key[1])
            _poison_from(_log.index(o))


def _poison_from(i) -> None:
    bad = set()
    for o in _log[i:]:
        if o is _log[i] or bad.intersection(o.reads):
            for d in o.outs:
                poison(d)
                bad.add(d.untyped_storage().data_ptr())
