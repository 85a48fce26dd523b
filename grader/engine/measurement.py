"""What a measurement holds (grader.engine.instruments records it): copies, host reads, kernels, waits and memory,
each with the learner's lines it came from, and how each reads in a check's message."""

from __future__ import annotations

import linecache
import sys
from collections import Counter
from dataclasses import dataclass, field

import torch

@dataclass(frozen=True)
class Line:
    """A statement of the learner's file: its line number and source text."""

    number: int
    code: str

    def __str__(self) -> str:
        code = self.code if len(self.code) <= _CODE_WIDTH else self.code[:_CODE_WIDTH - 3] + "..."
        return f"line {self.number}, `{code}`" if code else f"line {self.number}"


_CODE_WIDTH = 72  # characters of a learner's statement quoted in a message


_learner_file: list = [None]  # the submission's filename (Submission.filename), set by attribute_to (a list: the
# baseline holds the grader's globals as they were before learner code ran, grader.guard.integrity)
_STACK_DEPTH = 200  # frames walked looking for the learner's: torch's own stack below a learner's line is short


def attribute_to(filename: str | None) -> None:
    """Attribute each counted event to the innermost statement of `filename` on the stack (None: to none).
    Set once per grading worker, which serves one submission (grader.engine.plugin)."""
    _learner_file[0] = filename


def learner_line() -> Line | None:
    """The statement of the learner's file that is running now, innermost first; None outside it."""
    filename = _learner_file[0]
    if filename is None:
        return None
    frame = sys._getframe(1)
    for _ in range(_STACK_DEPTH):
        if frame is None:
            return None
        if frame.f_code.co_filename == filename:
            number = frame.f_lineno
            return Line(number, linecache.getline(filename, number).strip())
        frame = frame.f_back
    return None


@dataclass(frozen=True)
class Copy:
    src: str
    dst: str
    nbytes: int
    blocking: bool = True  # False: non_blocking=True into (d2h) or from (h2d) pinned memory: Python goes on
    dtype: torch.dtype | None = None  # the dtype that crossed
    converted_on: str | None = None  # where a copy that changed the dtype converted: "device" or "cpu"
    line: Line | None = None  # the learner's statement that made it


@dataclass
class Measurement:
    """Counts for one `with measure(device):` block, on `device`."""

    device: torch.device
    h2d: list[Copy] = field(default_factory=list)
    d2h: list[Copy] = field(default_factory=list)
    d2d: list[Copy] = field(default_factory=list)
    host_reads: int = 0  # device values read by Python: .item(), int(t), bool(t), if t:, print(t) ...
    printed: int = 0  # of those, device tensors printed (print(t), str(t), repr(t), an f-string)
    data_dependent: list[str] = field(default_factory=list)  # nonzero, masked_select, ... on the device
    kernels: int = 0  # operations run on the device
    peak_bytes: int | None = None  # peak device memory allocated inside the block (None: not known here)
    explicit_syncs: int = 0  # synchronize() of this device, and waits for one of its kind's streams or events
    unawaited_d2h: int = 0  # non-blocking copies to the CPU that no later wait covered (yet)
    # The learner's statement behind each counted event (None: none of the learner's file was on the stack).
    read_lines: Counter = field(default_factory=Counter)  # host reads that were not prints
    printed_lines: Counter = field(default_factory=Counter)
    sync_lines: Counter = field(default_factory=Counter)
    data_dependent_lines: list = field(default_factory=list)  # beside data_dependent, one Line or None each
    # Where float64 came onto the device, by line: each operation, copy or torch.tensor(...) that made a float64
    # tensor there from no float64 there (what MPS cannot hold; work on it afterwards is not counted again)
    float64_lines: Counter = field(default_factory=Counter)

    def _read(self, printed: bool = False) -> None:
        """Note one host read (a print if `printed`) at the learner's line: the host waited for everything."""
        line = learner_line()
        self.host_reads += 1
        if printed:
            self.printed += 1
            self.printed_lines[line] += 1
        else:
            self.read_lines[line] += 1
        self.unawaited_d2h = 0

    def _synced(self) -> None:
        self.explicit_syncs += 1
        self.sync_lines[learner_line()] += 1
        self.unawaited_d2h = 0

    @property
    def round_trips(self) -> int:
        """Copies to the CPU plus host reads: each makes the host wait for the device."""
        return len(self.d2h) + self.host_reads

    @property
    def waits(self) -> int:
        """Times Python waited until the device was done: blocking copies back, host reads, explicit
        synchronisations. A non-blocking copy to the CPU counts only if nothing waited after it: reading its
        values then is a race, which costs as much to fix as a wait."""
        blocking = sum(1 for c in self.d2h if c.blocking)
        return blocking + self.host_reads + self.explicit_syncs + self.unawaited_d2h

    @property
    def syncs(self) -> int:
        """Times the host had to wait for the device (waits, and operations whose output size depends on data)."""
        return self.waits + len(self.data_dependent)

    @property
    def float64(self) -> int:
        """float64 tensors made on the device from no float64 there (float64_lines); not those printing makes."""
        return sum(self.float64_lines.values())

    def describe_float64(self) -> str:
        """Where float64 tensors were made on the device: "line 7, `total = ...`: 1 float64 tensor made on sim:0"."""
        return _at_lines(self.float64_lines, lambda n, _: f"{n} float64 tensor{'s' if n > 1 else ''} made on "
                         f"{self.device}")

    def describe_round_trips(self) -> str:
        return self._describe(self.d2h)

    def describe_waits(self) -> str:
        """What `waits` counted, in words."""
        return self._describe([c for c in self.d2h if c.blocking], self.unawaited_d2h, self.explicit_syncs)

    def describe_data_dependent(self) -> str:
        """The data-sized operations run, each with its count and the learner's lines: "nonzero 2 times (line
        14, `x.nonzero()`)"."""
        lines = self.data_dependent_lines + [None] * (len(self.data_dependent) - len(self.data_dependent_lines))
        parts = []
        for op, n in Counter(self.data_dependent).items():
            where = Counter(line for name, line in zip(self.data_dependent, lines) if name == op)
            parts.append(_at_lines(where, lambda k, _: f"{op} {k} time{'s' if k > 1 else ''}", short=True))
        return ", ".join(parts)

    def _describe(self, copies_back: list[Copy], unawaited: int = 0, syncs: int = 0) -> str:
        def plural(n, word, many):
            return f"{n} {word if n == 1 else many}"
        parts = []
        if copies_back:
            nbytes = Counter()
            for c in copies_back:
                nbytes[c.line] += c.nbytes
            where = Counter(c.line for c in copies_back)
            parts.append(_at_lines(where, lambda n, lines: (
                f"{plural(n, 'copy', 'copies')} from {self.device} to the CPU "
                f"({sum(nbytes[line] for line in lines)} bytes)")))
        if unawaited:
            where = Counter(c.line for c in (self.d2h[-unawaited:] if unawaited <= len(self.d2h) else []))
            where[None] += unawaited - sum(where.values())
            parts.append(_at_lines(where, lambda n, _: f"{plural(n, 'copy', 'copies')} to the CPU with "
                                   "non_blocking=True", "that nothing waited for (their values may not have arrived "
                                   "when Python reads them)"))
        reads = self.host_reads - self.printed
        if reads:
            parts.append(_at_lines(_padded(self.read_lines, reads),
                                   lambda n, _: f"{plural(n, 'read', 'reads')} of a {self.device} value",
                                   "by Python (.item(), int(), float(), bool(), .tolist() or an if on a tensor)"))
        if self.printed:
            parts.append(_at_lines(_padded(self.printed_lines, self.printed),
                                   lambda n, _: f"{plural(n, 'tensor', 'tensors')} printed",
                                   f"(print(t) of a {self.device} tensor: Python waits for the device to read its "
                                   "values)"))
        if syncs:
            parts.append(_at_lines(_padded(self.sync_lines, syncs), lambda n, _: (
                f"{plural(n, 'explicit synchronisation', 'explicit synchronisations')} of {self.device}"),
                "(synchronize())"))
        return " and ".join(parts) or "nothing"


#: Learner lines named for one kind of event, most frequent first; the rest are summed up.
MAX_LINES = 3


def _padded(lines: Counter, total: int) -> Counter:
    """`lines`, with the events counted but not attributed (a Measurement made by hand) under None."""
    missing = total - sum(lines.values())
    return lines + Counter({None: missing}) if missing > 0 else lines


def _at_lines(where: Counter, what, explain: str = "", short: bool = False) -> str:
    """What happened (`what(n, lines)`: "9 reads of a sim:0 value", for n events at `lines`, then `explain`
    once) at the learner's lines in `where` (Line, or None outside the learner's file -> count). One line:
    "line 14, `loss.item()`: 9 reads of a sim:0 value by Python (...)". Several: each with its own count, most
    frequent first, at most MAX_LINES, then the rest "on N more lines". No line known: `what` alone. `short`:
    "nonzero 2 times (line 14, `code`)", for a list of kinds."""
    tail = f" {explain}" if explain else ""
    total = sum(where.values())
    named = [(line, n) for line, n in where.most_common() if line is not None]
    if not named:
        return what(total, list(where)) + tail
    shown, hidden = named[:MAX_LINES], [line for line, _ in named[MAX_LINES:]]
    more = f"on {len(hidden)} more line{'s' if len(hidden) > 1 else ''}" if hidden else ""
    if short:
        lines = ", ".join(str(line) for line, _ in shown) + (f", and {more[3:]}" if more else "")
        return f"{what(total, list(where))}{tail} ({lines})"
    text = "; ".join(f"{line}: {what(n, [line])}" for line, n in shown)
    rest = total - sum(n for _, n in shown)
    if rest:
        elsewhere = [m for m in (more, "outside your file" if where.get(None) else "") if m]
        text += f"; and {what(rest, hidden + [None])} {' and '.join(elsewhere)}"
    return text + tail
