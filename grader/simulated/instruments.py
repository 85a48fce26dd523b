"""Instruments of the simulated accelerator: what a grader reads inside `with record() as rec:`.

The backend appends to every active Recorder as copies, synchronisations and launches happen."""

from __future__ import annotations

import contextlib


class CopyRecord:
    __slots__ = ("kind", "nbytes", "non_blocking", "pinned", "src", "dst")

    def __init__(self, kind, nbytes, non_blocking, pinned, src, dst):
        self.kind = kind
        self.nbytes = nbytes
        self.non_blocking = non_blocking
        self.pinned = pinned
        self.src = src
        self.dst = dst

    def __repr__(self):
        return (
            f"CopyRecord({self.kind}, {self.nbytes} B, {self.src}->{self.dst}, "
            f"non_blocking={self.non_blocking}, pinned={self.pinned})"
        )


class SyncRecord:
    __slots__ = ("reason", "device")

    def __init__(self, reason, device):
        self.reason = reason
        self.device = device

    def __repr__(self):
        return f"SyncRecord({self.reason!r}, {self.device})"


class HostRead:
    """Python asked for a device value (``.item()``, ``int()``, ``float()``, ``bool()``/``if t:``,
    ``.tolist()``, ``operator.index``): the host waits for the device, like a CUDA sync point."""

    __slots__ = ("reason", "device")

    def __init__(self, reason, device):
        self.reason = reason
        self.device = device

    def __repr__(self):
        return f"HostRead({self.reason!r}, {self.device})"


class RaceRecord:
    """The host wrote to pinned memory while a non_blocking copy from it had not run yet on the device:
    on a GPU the device may read old, new or torn data."""

    __slots__ = ("device", "nbytes")

    def __init__(self, device, nbytes):
        self.device = device
        self.nbytes = nbytes

    def __repr__(self):
        return f"RaceRecord({self.device}, {self.nbytes} B)"


class StreamRaceRecord:
    """Two streams touched the same device memory with no wait ordering them (races.py): ``kind`` is
    ``"read before the write"`` (an op read a tensor another stream was still writing) or ``"reused while in
    use"`` (a block freed and handed to a new tensor while another stream's op still read it)."""

    __slots__ = ("kind", "device", "writer", "reader")

    def __init__(self, kind, device, writer, reader):
        self.kind, self.device, self.writer, self.reader = kind, device, writer, reader

    def __repr__(self):
        return f"StreamRaceRecord({self.kind!r}, {self.device}, stream {self.writer} vs stream {self.reader})"


class Recorder:
    """Collects copies, sync points and launches while active (see ``record()``)."""

    def __init__(self):
        self.h2d: list[CopyRecord] = []
        self.d2h: list[CopyRecord] = []
        self.d2d: list[CopyRecord] = []
        self.syncs: list[SyncRecord] = []
        self.host_reads: list[HostRead] = []
        self.races: list[RaceRecord] = []
        self.stream_races: list[StreamRaceRecord] = []
        self.launches = 0
        self.ops: dict[str, int] = {}

    @property
    def copies(self):
        return self.h2d + self.d2h + self.d2d

    @property
    def n_syncs(self):
        return len(self.syncs)

    @property
    def sync_reasons(self):
        return [s.reason for s in self.syncs]

    @property
    def host_read_reasons(self):
        return [r.reason for r in self.host_reads]

    @property
    def bytes_h2d(self):
        return sum(c.nbytes for c in self.h2d)

    @property
    def bytes_d2h(self):
        return sum(c.nbytes for c in self.d2h)

    @property
    def bytes_d2d(self):
        return sum(c.nbytes for c in self.d2d)

    def __repr__(self):
        return (
            f"Recorder(launches={self.launches}, h2d={len(self.h2d)}, d2h={len(self.d2h)}, "
            f"d2d={len(self.d2d)}, syncs={self.sync_reasons}, host_reads={self.host_read_reasons})"
        )


recorders: list[Recorder] = []  # the active ones, innermost last


@contextlib.contextmanager
def record():
    rec = Recorder()
    recorders.append(rec)
    try:
        yield rec
    finally:
        recorders.remove(rec)


def note_copy(kind, nbytes, non_blocking, pinned, src, dst):
    if recorders:
        r = CopyRecord(kind, nbytes, non_blocking, pinned, str(src), str(dst))
        for rec in recorders:
            getattr(rec, kind).append(r)


def note_host_read(reason, device):
    if recorders:
        r = HostRead(reason, str(device))
        for rec in recorders:
            rec.host_reads.append(r)


def note_race(device, nbytes):
    if recorders:
        r = RaceRecord(str(device), nbytes)
        for rec in recorders:
            rec.races.append(r)


def note_stream_race(kind, device, writer, reader):
    if recorders:
        r = StreamRaceRecord(kind, str(device), writer, reader)
        for rec in recorders:
            rec.stream_races.append(r)
