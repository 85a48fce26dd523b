"""What the doctor watches while the learner's script runs, beyond grader.engine.instruments.measure (host reads,
syncs, data-dependent operations, float64 made on the device, peak memory): each copy between host and device
with its step, size, pinned-ness, non_blocking and a fingerprint of what crossed (the same values copied every
step are a helper that belongs on the device), reads of a non_blocking copy's destination before anything
waited, device memory held per learner line, and module state left behind when a model moves.

Every event carries the loop iterations it happened in (`Recorder.step`: grader.doctor.loops' context) and the
learner's line (grader.engine.instruments attributes it). Watching must never change what the script does: every
hook swallows its own errors."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import weakref
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import _disable_current_modes

from grader.engine import instruments
from grader.doctor import habits
from grader.engine.instruments import Line

aten = torch.ops.aten
_COPIES = (aten._to_copy.default, aten.copy_.default)
SMALL = 64 * 2**10  # device tensors smaller than this, made in no_grad, are not followed for memory
FINGERPRINT_BYTES = 4 * 2**20  # larger sources are not fingerprinted (hashing them would cost a copy's time)


def line() -> Line | None:
    return instruments.learner_line()


@dataclass
class CopyEvent:
    step: tuple  # the loops running and their iterations (grader.doctor.loops.Loops.context)
    kind: str  # h2d, d2h, d2d
    line: Line | None
    nbytes: int
    pinned: bool  # the host side is pinned memory
    non_blocking: bool
    fingerprint: str | None  # of the values that went to the device (h2d), when small enough
    src: str = ""
    dst: str = ""


@dataclass
class LeftBehind:
    line: Line | None
    what: str  # "`self.mask` (a CPU tensor of Net)"
    target: str
    owner: type | None = None  # the module's class, and the attribute left behind
    attribute: str = ""
    ids: frozenset = frozenset()  # id() of the tensors left behind


@dataclass
class Held:
    line: Line | None
    step: tuple
    nbytes: int
    ref: weakref.ref


class Logged(Counter):
    """A Measurement's counter of events by line (host reads, syncs) that also logs each event with the loop
    iterations it happened in, into `log` as (context, line), and tells `waited(line)` (each is a wait)."""

    def __init__(self, loops, log: list, waited=None):
        super().__init__()
        self.loops, self.log, self.waited = loops, log, waited

    def __setitem__(self, key, value):
        for _ in range(value - self.get(key, 0)):
            self.log.append((self.loops.context, key))
        if self.waited is not None:
            try:
                self.waited(key)
            except Exception:
                pass
        super().__setitem__(key, value)


class LoggedList(list):
    def __init__(self, loops, log: list):
        super().__init__()
        self.loops, self.log = loops, log

    def append(self, item):
        self.log.append((self.loops.context, item))
        super().append(item)


@dataclass
class Recorder:
    device: torch.device
    loops: object = None  # grader.doctor.loops.Loops
    copies: list[CopyEvent] = field(default_factory=list)
    early_reads: list = field(default_factory=list)  # (step, line of the read, line of the copy)
    left_behind: list[LeftBehind] = field(default_factory=list)
    held: dict[int, Held] = field(default_factory=dict)  # live device tensors the script made
    live_bytes: int = 0
    peak_bytes: int = 0
    peak_holders: Counter = field(default_factory=Counter)  # line -> bytes held at the peak
    pending: dict = field(default_factory=dict)  # data_ptr -> line of non_blocking copies back not waited for
    measurement: instruments.Measurement | None = None
    # Lines whose data-sized operations ran in backward (the gradient of a forward one, reported there)
    backward_lines: set = field(default_factory=set)
    # Inside library code that reads device values or makes float64 by design (GradScaler checks for inf every
    # step, with a float64 reciprocal): not the learner's doing. by_design counts its reads per line,
    # by_design_float64 the float64 it brought onto the device (of measurement.float64_lines) per line.
    inside_library: int = 0
    syncs: list = field(default_factory=list)  # (step, line, device waited for) of synchronize() calls
    by_design: Counter = field(default_factory=Counter)
    by_design_float64: Counter = field(default_factory=Counter)
    repairing: int = 0  # inside grader.doctor.mismatch's move of a stray operand
    # grader.doctor.habits: clock reads, the last synchronize (line, kernels), synchronize lines that time
    kernels_at_wait: int = 0  # device operations run before the host last waited for the device
    last_sync: tuple | None = None
    clocks: list = field(default_factory=list)
    timing_syncs: set = field(default_factory=set)
    empty_caches: list = field(default_factory=list)  # (context, line)
    inside_empty_cache: int = 0
    loads: list = field(default_factory=list)  # habits.Loaded
    carries: list = field(default_factory=list)  # (context, line of the op, line that made the tensor, loop uid)
    kept: list = field(default_factory=list)  # (loop line, line that made them, holder or None, bytes): habits

    # (context, line) of each host read, print, synchronize or stream wait, data-dependent operation
    reads: list = field(default_factory=list)
    waits: list = field(default_factory=list)
    data_dependent: list = field(default_factory=list)

    @property
    def step(self) -> tuple:
        return self.loops.context

    def log_into(self, m: instruments.Measurement) -> None:
        """Log the measurement's events by line with their loop iterations, as they are counted."""
        from grader.doctor.habits import waited

        m.read_lines = Logged(self.loops, self.reads, lambda line: waited(self))
        m.printed_lines = Logged(self.loops, self.reads, lambda line: waited(self))
        m.sync_lines = Logged(self.loops, self.waits, lambda line: waited(self, line, sync=True))
        m.data_dependent_lines = LoggedList(self.loops, self.data_dependent)

    def on_device(self, t) -> bool:
        return isinstance(t, torch.Tensor) and t.device.type == self._type

    def __post_init__(self):
        self._type = self.device.type

    # ---------------------------------------------------------------------------- memory held per line
    def hold(self, t: torch.Tensor) -> None:
        key = id(t)
        if key in self.held:
            return
        nbytes = t.numel() * t.element_size()
        if nbytes < SMALL and not torch.is_grad_enabled():
            # neither a part of the peak worth naming nor of a graph (below autograd, an output's requires_grad is
            # not set yet: grad mode says whether it may be); and naming its line costs a walk up the stack
            return

        def freed(_ref, key=key, nbytes=nbytes):
            if self.held.pop(key, None) is not None:
                self.live_bytes -= nbytes

        self.held[key] = Held(line(), self.step, nbytes, weakref.ref(t, freed))
        self.live_bytes += nbytes
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes
            if self.live_bytes > 1.1 * sum(self.peak_holders.values()) or not self.peak_holders:
                self.peak_holders = Counter()
                for h in self.held.values():
                    self.peak_holders[h.line] += h.nbytes

    # ---------------------------------------------------------------------------- non_blocking copies back
    def waited(self) -> bool:
        m = self.measurement
        if m is not None and m.unawaited_d2h == 0:
            self.pending.clear()
        return not self.pending

    def check_read(self, tensors) -> None:
        if not self.pending or self.waited():
            return
        for t in tensors:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                try:
                    ptr = t.untyped_storage().data_ptr()
                except Exception:
                    continue
                if ptr in self.pending:
                    self.early_reads.append((self.step, line(), self.pending.pop(ptr)))
                    return


def _fingerprint(t: torch.Tensor) -> str | None:
    try:
        if t.numel() * t.element_size() > FINGERPRINT_BYTES:
            return None
        with _disable_current_modes():
            data = t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        return f"{t.dtype}{tuple(t.shape)}:" + hashlib.blake2b(data, digest_size=12).hexdigest()
    except Exception:
        return None


class Watch(instruments.CountingMode):
    """grader.engine.instruments' counting mode, which also feeds a Recorder (copies, memory, early reads): one
    mode, not two stacked, since each Python dispatch mode costs every operation a round trip through Python."""

    def __init__(self, m: instruments.Measurement, rec: Recorder):
        super().__init__(m)
        self.rec = rec

    def _run(self, func, args, kwargs):
        if instruments.is_composite(func):  # as instruments.CountingMode._run: split what inference mode left whole
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        rec = self.rec
        before = None
        try:
            if rec.pending and func not in _COPIES:
                rec.check_read(instruments.tensors_in(args))
            if func in _COPIES:
                before = self._source(func, args)
        except Exception:
            pass
        out = func(*args, **kwargs)
        try:
            self._note(func, args, kwargs, out)  # grader.engine.instruments' counts (float64 on the device among them)
        except Exception:
            pass
        try:
            self._watch(func, args, kwargs, out, before)
        except Exception:  # watching must never change what the script does
            pass
        return out

    @staticmethod
    def _source(func, args):
        src = args[0] if func is aten._to_copy.default else args[1]
        if isinstance(src, torch.Tensor) and src.device.type == "cpu":
            return _fingerprint(src), src.is_pinned()
        return None

    def _watch(self, func, args, kwargs, out, before):
        rec = self.rec
        if rec.repairing:
            return  # grader.doctor.mismatch moving a stray operand: not the script's own work
        if func in _COPIES:
            src, dst = (args[0], out) if func is aten._to_copy.default else (args[1], args[0])
            if isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) and src.device != dst.device:
                kind = "d2h" if dst.device.type == "cpu" else "h2d" if src.device.type == "cpu" else "d2d"
                non_blocking = instruments.non_blocking(func is aten._to_copy.default, args, kwargs)
                fingerprint, pinned = before if before else (None, False)
                if kind == "d2h":
                    pinned = dst.is_pinned()
                    if non_blocking and pinned:
                        rec.pending[dst.untyped_storage().data_ptr()] = line()
                    else:
                        rec.pending.clear()  # a blocking copy back waits for everything queued before it
                        habits.waited(rec)
                rec.copies.append(CopyEvent(rec.step, kind, line(), dst.numel() * dst.element_size(), pinned,
                                            non_blocking, fingerprint if kind == "h2d" else None,
                                            str(src.device), str(dst.device)))
        if isinstance(out, torch.Tensor):  # most operations: one output, no walk
            outs = [out] if out.device.type == rec._type else []
        else:
            outs = [t for t in instruments.tensors_in(out) if rec.on_device(t)]
        if not outs:
            return
        if rec.loops.unmarked and func not in _NOT_WORK:
            rec.loops.work()
        if rec.loops.context and torch.is_grad_enabled() and torch._C._current_autograd_node() is None:
            habits.carried(rec, args)
        if (func in instruments.DATA_DEPENDENT or func in instruments.INDEXING) \
                and torch._C._current_autograd_node() is not None:
            rec.backward_lines.add(line())
        if _makes_memory(func):
            for t in outs:
                rec.hold(t)


#: Device operations that do not make a loop a working one: copies to the device and initialisations (a loop that
#: builds or initialises a model's layers is not cut).
_NOT_WORK = set(_COPIES) | {aten.fill_.Scalar, aten.zero_.default, aten.uniform_.default, aten.normal_.default,
                            aten.empty.memory_format, aten.zeros.default, aten.ones.default, aten.full.default,
                            aten.detach.default, aten.lift_fresh.default, aten.random_.default,
                            aten.arange.start_step}

_MAKES_MEMORY: dict = {}  # op -> whether its outputs are new memory (not a view, not written in place)


def _makes_memory(func) -> bool:
    found = _MAKES_MEMORY.get(func)
    if found is None:
        found = _MAKES_MEMORY[func] = not func.is_view and not func._schema.is_mutable
    return found


@contextlib.contextmanager
def measure(device: torch.device, rec: Recorder):
    """grader.engine.instruments.measure(device), with Watch as its counting mode: the same Measurement (host reads,
    syncs, data-dependent operations, float64 on the device, peak memory), and the Recorder's events besides."""
    def watch(m: instruments.Measurement) -> Watch:
        rec.measurement = m
        rec.log_into(m)
        return Watch(m, rec)

    with instruments.measure(device, mode=watch) as m:
        yield m


# -------------------------------------------------------------------------------- outside the dispatcher
def watch_python_data(rec: Recorder):
    """torch.tensor(list, device=...) copies its values below the dispatcher: note those copies, with a
    fingerprint of the Python values (the same list every step is a helper). Returns the undo."""
    undo = []
    for owner, name, first in ((torch, "tensor", 0), (torch, "as_tensor", 0)):
        original = getattr(owner, name)

        def make(*args, _original=original, _first=first, **kwargs):
            out = _original(*args, **kwargs)
            try:
                data = args[_first] if len(args) > _first else kwargs.get("data")
                if isinstance(data, (list, tuple)) and isinstance(out, torch.Tensor) and rec.on_device(out):
                    text = repr(data)
                    fingerprint = hashlib.blake2b(text.encode(), digest_size=12).hexdigest() \
                        if len(text) < FINGERPRINT_BYTES else None
                    rec.copies.append(CopyEvent(rec.step, "h2d", line(), out.numel() * out.element_size(), False,
                                                False, fingerprint, "cpu", str(out.device)))
                    rec.hold(out)
            except Exception:
                pass
            return out

        functools.update_wrapper(make, original)
        setattr(owner, name, make)
        undo.append((owner, name, original))
    for name in ("numpy", "tolist"):  # host reads that do not go through the dispatcher
        original = getattr(torch.Tensor, name)

        def read(self, *args, _original=original, **kwargs):
            try:
                rec.check_read([self])
            except Exception:
                pass
            return _original(self, *args, **kwargs)

        functools.update_wrapper(read, original)
        setattr(torch.Tensor, name, read)
        undo.append((torch.Tensor, name, original))
    return undo


def watch_module_moves(rec: Recorder):
    """After `model.to(device)` (or .cuda()), note what stayed behind: plain tensor attributes, and modules or
    tensors kept in plain lists and dicts, which nn.Module does not move."""
    original = torch.nn.Module.to

    @functools.wraps(original)
    def to(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        try:
            target = _moved_to(self)
            if target is not None and target.type == rec.device.type:
                for what, owner, attribute, ids in _left_behind(self, target):
                    rec.left_behind.append(LeftBehind(line(), what, str(target), owner, attribute, ids))
        except Exception:
            pass
        return out

    torch.nn.Module.to = to
    return [(torch.nn.Module, "to", original)]


def _moved_to(module: torch.nn.Module):
    for p in module.parameters():
        return p.device
    for b in module.buffers():
        return b.device
    return None


def _left_behind(model: torch.nn.Module, target: torch.device):
    for prefix, module in model.named_modules():
        owner = f"self.{{}} of {type(module).__name__}" if not prefix else f"{prefix}.{{}}"
        for name, value in vars(module).items():
            if name.startswith("_"):
                continue
            if isinstance(value, torch.Tensor) and value.device != target:
                yield (f"`{owner.format(name)}` (a tensor on {value.device}, a plain attribute)", type(module), name,
                       frozenset({id(value)}))
            elif isinstance(value, (list, tuple, dict)):
                items = value.values() if isinstance(value, dict) else value
                kinds = {("module" if isinstance(v, torch.nn.Module) else "tensor") for v in items
                         if isinstance(v, torch.nn.Module) and _moved_to(v) not in (None, target)
                         or isinstance(v, torch.Tensor) and v.device != target}
                if kinds:
                    holder = "nn.ModuleList/ModuleDict" if "module" in kinds else "buffers"
                    ids = set()
                    for v in items:
                        if isinstance(v, torch.nn.Module):
                            ids |= {id(t) for t in v.parameters()} | {id(t) for t in v.buffers()}
                        elif isinstance(v, torch.Tensor):
                            ids.add(id(v))
                    yield (f"`{owner.format(name)}` (a plain {type(value).__name__} of "
                           f"{' and '.join(sorted(kinds))}s, not moved: make it {holder})", type(module), name,
                           frozenset(ids))


#: Library functions that sync or make float64 on the device by design, every step.
BY_DESIGN = (("torch.amp.grad_scaler", "GradScaler", ("step", "update", "unscale_")),)


def watch_library(rec: Recorder):
    """Mark the calls of BY_DESIGN functions, so that their reads and float64 are not reported as the learner's."""
    import importlib

    undo = []
    for module_name, class_name, methods in BY_DESIGN:
        try:
            owner = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):
            continue
        for name in methods:
            original = getattr(owner, name)

            def call(*args, _original=original, **kwargs):
                m = rec.measurement
                before = (m.read_lines + m.printed_lines) if m is not None else Counter()
                float64_before = m.float64_lines.copy() if m is not None else Counter()
                rec.inside_library += 1
                try:
                    return _original(*args, **kwargs)
                finally:
                    rec.inside_library -= 1
                    if m is not None:
                        rec.by_design.update((m.read_lines + m.printed_lines) - before)
                        rec.by_design_float64.update(m.float64_lines - float64_before)

            functools.update_wrapper(call, original)
            setattr(owner, name, call)
            undo.append((owner, name, original))
    return undo


def watch_synchronize(rec: Recorder):
    """Note every synchronize() of the accelerator, whichever device it waits for: the host stalls all the same
    (instruments.measure counts only those that wait for the measured device). A call made inside another (the
    simulator's accelerator hooks call its module's) is one wait."""
    owners = [torch.accelerator]
    module = getattr(torch, rec.device.type, None)
    if module is not None and callable(getattr(module, "synchronize", None)):
        owners.append(module)
    undo, inside = [], [0]
    for owner in owners:
        original = owner.synchronize

        def synchronize(device=None, *args, _original=original, _owner=owner, **kwargs):
            if not inside[0] and not rec.inside_library:
                try:
                    if device is None:
                        current = getattr(_owner, "current_device", None) or torch.accelerator.current_device_index
                        waited = f"{rec.device.type}:{current()}"
                    else:
                        waited = str(torch.device(rec.device.type, device) if isinstance(device, int)
                                     else torch.device(device))
                    where = line()
                    rec.syncs.append((rec.step, where, waited))
                    habits.waited(rec, where, sync=True)
                except Exception:
                    pass
            inside[0] += 1
            try:
                return _original(device, *args, **kwargs)
            finally:
                inside[0] -= 1

        functools.update_wrapper(synchronize, original)
        setattr(owner, "synchronize", synchronize)
        undo.append((owner, "synchronize", original))
    return undo
