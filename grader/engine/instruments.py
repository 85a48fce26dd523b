"""What a grader measures while learner code runs, recorded the same way on every leg.

A `TorchDispatchMode` sees every aten operation below autograd, whatever the device: the CPU, CUDA, MPS or
the simulated accelerator. So copies between host and device, host reads of device values
(`.item()`, `int(t)`, `bool(t)`, `if t:`, `.tolist()` all end in `_local_scalar_dense` or a copy to the CPU),
operations whose output size depends on device data (the device must finish before the host can go on),
and the kernels launched are counted by one piece of code on every leg. Peak memory comes from the device
module (`torch.cuda`, `torch.sim`, ...) where it keeps one.

Explicit synchronisation is not an aten operation: `measure` counts it by wrapping, for the duration of the
block, `torch.accelerator.synchronize` and the device module's `synchronize` (`torch.cuda.synchronize`,
`torch.sim.synchronize`, ...), the same Python functions on every leg. A wait for one stream or one event
(`Stream.synchronize()`, `Event.synchronize()`, whichever class made it: `torch.Stream` and `torch.Event` are
C types on CUDA, which cannot be wrapped) is reported by the device's GPU trace: CUDA's, which PyTorch calls
from C++, and the simulator's mirror of it. CUDA also reports the waits inside operations (a copy to the host,
`.item()`), counted by the dispatch mode already: a report that comes while an operation, or one of the
grader's wrappers, runs on the measuring thread is not counted again. Printing a tensor turns dispatch modes
off while it reads the values (33 waits reported for one `str(x)` on an H100, fourteenth session), so the
grader stands in for `torch._tensor_str._str`: `print(t)`, `str(t)`, `repr(t)` or an f-string of a device
tensor counts as one host read per printed tensor on every leg (the chapter lists print(t) among the syncs),
and the waits inside it are not counted again.

A copy that also changes the dtype crosses in the dtype of the side that does not convert: CUDA's copy
(copy_kernel_cuda) converts on the device when non_blocking=True (the source dtype crosses to the device, the
destination dtype back from it) and on the CPU otherwise; MPS's always move the destination dtype.
`Copy.nbytes` are the bytes that cross.

Copies made below the dispatcher, the values of `torch.tensor(list, device=...)` (and `torch.as_tensor`,
`x.new_tensor`), are counted by wrapping those functions the same way.

float64 on the device (`m.float64`: what MPS cannot hold, asked of code that must run there) is counted where it
comes onto the device: an operation or copy that makes a float64 tensor there while none of its inputs there is
float64 (a factory, a conversion, a copy in), and a float64 tensor that those wrapped functions make. Work on a
float64 tensor already there is not counted again, and neither is the float64 torch makes to print a tensor
(printing turns the dispatch mode off; the wrappers skip it too).

Each counted event carries the learner's statement that caused it (`Line`): the innermost frame of the
submission's file on the stack when the event is counted (`attribute_to` names the file, `learner_line()` finds
the statement; the stack is walked only when an event is counted, not for every kernel), so that a message can
say "line 14, `loss.item()`: 9 reads of a sim:0 value" on every leg alike.

The doctor (grader.doctor.observe) counts with the same code and watches more from one mode: it subclasses
`CountingMode` and passes it to `measure(device, mode=...)`, and reads the public helpers (`learner_line`,
`is_composite`, `non_blocking`, `DATA_DEPENDENT`, `INDEXING`); the names with an underscore are this module's own.

What is not seen: work queued on other threads, functions imported by name before the block (`from torch import
tensor`), and on MPS, which has no GPU trace, waits for one stream or event.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader.engine import legs
from grader.engine.measurement import Copy, Line, Measurement, attribute_to, learner_line
from grader.guard import audit, integrity

aten = torch.ops.aten

#: Operations whose output size depends on the values on the device: CUDA must finish the work queued before
#: them and copy a count to the host (torch.cuda.set_sync_debug_mode flags each).
DATA_DEPENDENT = {
    aten.nonzero.default, aten.masked_select.default, aten.unique_consecutive.default,
    aten._unique2.default, aten.unique_dim.default, aten.repeat_interleave.Tensor,
    aten.nonzero_static.default,
}
# Indexing with a boolean mask finds its True entries first (a nonzero inside the kernel, unseen by dispatch).
INDEXING = {aten.index.Tensor, aten.index_put_.default, aten.index_put.default, aten._index_put_impl_.default}
_HOST_READ = aten._local_scalar_dense.default
# Metadata and views launch nothing on a device.
_NOT_KERNELS = {aten.detach.default, aten.alias.default, aten.lift_fresh.default, aten.empty.memory_format,
                aten.empty_strided.default, aten._local_scalar_dense.default}



def _is_device(t, device: torch.device) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type == device.type and t.device.type != "cpu"


def _on_measured(device: torch.device, measured: torch.device) -> bool:
    """Whether memory on `device` is the measured accelerator's: its kind, and its index where one is measured."""
    return device.type == measured.type != "cpu" and (measured.index is None or device.index == measured.index)


def tensors_in(tree):
    """Every tensor in `tree`: a tensor, or lists, tuples and dicts of them, nested."""
    if isinstance(tree, torch.Tensor):
        yield tree
    elif isinstance(tree, (list, tuple)):
        for x in tree:
            yield from tensors_in(x)
    elif isinstance(tree, dict):
        for x in tree.values():
            yield from tensors_in(x)


def _any_on(tree, device: torch.device) -> bool:
    """Whether a tensor of `tree` is on `device`'s kind of accelerator (a lone tensor without a walk)."""
    if isinstance(tree, torch.Tensor):
        return _is_device(tree, device)
    return any(_is_device(t, device) for t in tensors_in(tree))


def _has_mask(indices) -> bool:
    return any(t.dtype in (torch.bool, torch.uint8) for t in tensors_in(indices))


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def non_blocking(is_to_copy: bool, args, kwargs) -> bool:
    """Whether a copy (aten._to_copy if `is_to_copy`, else aten.copy_) was asked with non_blocking=True."""
    if is_to_copy:
        return bool(kwargs.get("non_blocking", False))
    return bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", False))


def _crossing(kind: str, src: torch.Tensor, dst: torch.Tensor, is_to_copy: bool, kwargs, args):
    """The dtype that crosses between host and device, and where a change of dtype runs ("device", "cpu" or
    None). A copy that changes the dtype converts on the device when non_blocking (the source dtype crosses to
    the device, the converted one back), on the CPU otherwise, as copy_kernel_cuda does."""
    if kind == "d2d" or src.dtype == dst.dtype:
        return dst.dtype, None
    device = (dst if kind == "h2d" else src).device.type
    if not _converts_like_cuda(device):
        return dst.dtype, "cpu" if kind == "h2d" else "device"
    on_device = non_blocking(is_to_copy, args, kwargs)
    crosses_as_source = (kind == "h2d") == on_device
    return (src if crosses_as_source else dst).dtype, "device" if on_device else "cpu"


def _converts_like_cuda(device_type: str) -> bool:
    """Whether copies to and from this kind of device convert as CUDA's do (the bytes that cross depend on
    non_blocking). MPS's do not: copy_to_mps_ converts on the CPU first, copy_from_mps_ casts straight into the
    host's destination (unified memory), so the destination dtype is what moves either way. The simulator
    follows the profile it was installed with."""
    return "mps" not in (device_type, legs.simulated_profile(device_type))


_COMPOSITE: dict = {}  # op -> whether it has a CompositeImplicitAutograd kernel


def is_composite(func) -> bool:
    """Whether `func` is made of other operations (a CompositeImplicitAutograd kernel), such as .to()."""
    found = _COMPOSITE.get(func)
    if found is None:
        found = _COMPOSITE[func] = torch._C._dispatch_has_kernel_for_dispatch_key(
            func.name(), torch._C.DispatchKey.CompositeImplicitAutograd)
    return found


class CountingMode(TorchDispatchMode):
    """The dispatch mode that counts into a Measurement (measure() enters it with the wrappers)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Else torch wraps __torch_dispatch__ to keep torch.compile out, importing torch._dynamo (seconds) in
        # every grading worker; this mode only counts, so nothing is there to compile.
        return False

    def __init__(self, m: Measurement):
        super().__init__()
        self.m = m

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        work = _at_work  # _deeper(_at_work), inlined: this runs for every operation
        work.depth = getattr(work, "depth", 0) + 1
        try:
            return self._run(func, args, kwargs or {})
        finally:
            work.depth -= 1

    def _run(self, func, args, kwargs):
        if is_composite(func):
            # Under torch.inference_mode() (no autograd), composite ops such as .to() reach this mode whole,
            # where autograd would have split them: split them here, inside the mode, so that what they run (a
            # _to_copy, the kernels) is counted as it is elsewhere.
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = func(*args, **kwargs)
        try:
            self._note(func, args, kwargs, out)
        except Exception:  # counting must never change what the learner's code does
            pass
        return out

    def _note(self, func, args, kwargs, out):
        m, dev = self.m, self.m.device
        if func is _HOST_READ:
            if _is_device(args[0], dev):
                m._read()  # the host waited for everything queued, those copies too
            return
        if dev.type != "cpu" and _brings_float64(out, args, dev):
            m.float64_lines[learner_line()] += 1
        if func is aten._to_copy.default or func is aten.copy_.default:
            src, dst = (args[0], out) if func is aten._to_copy.default else (args[1], args[0])
            if isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) and src.device != dst.device:
                kind = ("d2h" if dst.device.type == "cpu" else "h2d" if src.device.type == "cpu" else "d2d")
                blocking = True
                if kind == "h2d":  # from pageable memory the driver stages the copy and returns once it is done
                    blocking = not (non_blocking(func is aten._to_copy.default, args, kwargs) and src.is_pinned())
                if kind == "d2h":
                    asynchronous = non_blocking(func is aten._to_copy.default, args, kwargs)
                    # into pageable memory CUDA's copy returns once done: a wait all the same
                    blocking = not (asynchronous and dst.is_pinned())
                    m.unawaited_d2h = m.unawaited_d2h + 1 if not blocking else 0
                crossed, converted_on = _crossing(kind, src, dst, func is aten._to_copy.default, kwargs, args)
                getattr(m, kind).append(Copy(str(src.device), str(dst.device), dst.numel() * crossed.itemsize,
                                             blocking, crossed, converted_on, learner_line()))
                return
        if dev.type == "cpu":  # everything is on the CPU: an op that makes a tensor ran there
            on_device = any(True for _ in tensors_in(out))
        else:
            on_device = _any_on(out, dev) or _any_on(args, dev)  # the output first: one tensor, most often
        if on_device and (func in DATA_DEPENDENT or (func in INDEXING and _has_mask(args[1]))):
            m.data_dependent.append(func.__name__.split(".")[0])
            m.data_dependent_lines.append(learner_line())
        if on_device and func not in _NOT_KERNELS and not func.is_view:
            m.kernels += 1


audit.CHECK_MODES.add(CountingMode)  # the grader's own mode, entered around learner code


def _brings_float64(out, args, device: torch.device) -> bool:
    """Whether an operation made a float64 tensor on `device`'s kind from no float64 there: a factory, a
    conversion, a copy in. Work on a float64 tensor already there (total += loss) is not counted again, so that
    each count is a place where float64 came onto the device."""
    if isinstance(out, torch.Tensor) and out.dtype is not torch.float64:
        return False  # most operations: one output, not float64
    return any(t.dtype is torch.float64 and _is_device(t, device) for t in tensors_in(out)) and not any(
        t.dtype is torch.float64 and _is_device(t, device) for t in tensors_in(args))


#: Operations and grader wrappers running on this thread: inside, the waits that the GPU trace reports are torch's
#: or the grader's own, counted by what called them.
_at_work = threading.local()


@contextlib.contextmanager
def _deeper(counter: threading.local):
    """Inside, this thread's `counter.depth` is one more: whether a call runs inside another of its kind."""
    counter.depth = getattr(counter, "depth", 0) + 1
    try:
        yield
    finally:
        counter.depth -= 1


#: Measurements in progress in this process, each with the thread it measures: a GPU trace's callbacks are
#: registered once per process (they cannot be removed) and find the block they count here.
_listening: list[tuple[Measurement, int]] = []
_traced: set[str] = set()  # device types whose GPU trace reports to _heard_wait


def _heard_wait(device_type: str):
    def waited(*_):
        try:
            if getattr(_at_work, "depth", 0):
                return
            me = threading.get_ident()
            for m, thread in _listening:
                if thread == me and m.device.type == device_type:
                    m._synced()
        except Exception:  # called from C++ on CUDA: counting must never change what the learner's code does
            pass
    return waited


def _gpu_trace(mod):
    trace = getattr(mod, "_gpu_trace", None)
    if trace is None and mod is getattr(torch, "cuda", None):
        import torch.cuda._gpu_trace as trace
    return trace if hasattr(trace, "register_callback_for_stream_synchronization") else None


@contextlib.contextmanager
def _counting_stream_waits(m: Measurement, mod):
    """Count waits for one stream or one event of m.device's kind, made on this thread (the module docstring
    says why through the GPU trace). Which device of that kind is not known from a report: any counts."""
    trace = _gpu_trace(mod)
    if trace is None:
        yield
        return
    kind = m.device.type
    if kind not in _traced:
        trace.register_callback_for_stream_synchronization(_heard_wait(kind))
        trace.register_callback_for_event_synchronization(_heard_wait(kind))
        if kind == "cuda":
            torch._C._activate_gpu_trace()  # process-wide and for good: a grading worker serves one submission
        _traced.add(kind)
    entry = (m, threading.get_ident())
    _listening.append(entry)
    try:
        yield
    finally:
        _listening.remove(entry)


def _counting_prints(m: Measurement):
    """Count each device tensor printed (`print(t)`, `str(t)`, `repr(t)`, an f-string of more than one value) as
    one host read: printing reads the values, so Python waits for the device. `_str` turns dispatch modes off
    and, on CUDA, makes dozens of waits of its own (the module docstring): they are this one read, not more.
    One printed tensor is one read, whatever printing calls inside (the outermost `_str`), counted on the
    measuring thread only, as the dispatch mode counts."""
    if m.device.type == "cpu":
        return contextlib.nullcontext()
    original = torch._tensor_str._str
    measuring = threading.get_ident()

    @functools.wraps(original)
    def printed(self, *args, **kwargs):
        outermost = not getattr(_at_work, "printing", False)
        if outermost and threading.get_ident() == measuring:
            try:
                if _is_device(self, m.device):
                    m._read(printed=True)  # the host waited for everything queued, those copies too
            except Exception:  # counting must never change what the learner's code does
                pass
        _at_work.printing = True
        try:
            with _deeper(_at_work):
                return original(self, *args, **kwargs)
        finally:
            if outermost:
                _at_work.printing = False

    return _standing_in([(torch._tensor_str, "_str", printed)])


def warm_up() -> None:
    """Enter a mode once, so that what the first time imports is imported before the integrity baseline."""
    with CountingMode(Measurement(torch.device("cpu"))):
        torch.ones(1).add(1)


def _device_module(device: torch.device):
    if device.type == "cpu":
        return None
    try:
        return torch.get_device_module(device)
    except Exception:
        return None


def _waits_for(measured: torch.device, mod):
    """Whether synchronize(device) of `mod`'s kind waits for `measured` (None: the current device, as CUDA's)."""
    def check(device=None):
        if device is None:
            current = getattr(mod, "current_device", lambda: 0)  # torch.mps has one device and no such call
            return measured.index is None or measured.index == current()
        device = torch.device(measured.type, device) if isinstance(device, int) else torch.device(device)
        return device.type == measured.type and (device.index is None or measured.index is None
                                                 or device.index == measured.index)
    return check


@contextlib.contextmanager
def _standing_in(wrappers):
    """The grader's wrappers, (owner, name, wrapper) each, in place for the block (integrity.stand_in)."""
    with contextlib.ExitStack() as stack:
        for owner, name, wrapper in wrappers:
            stack.enter_context(integrity.stand_in(owner, name, wrapper))
        yield


def _counting_syncs(m: Measurement, mod):
    """Count calls of torch.accelerator.synchronize and mod.synchronize that wait for m.device. A call made
    inside another (the simulator's accelerator hooks call its module's) is the same wait."""
    if mod is None or not callable(getattr(mod, "synchronize", None)):
        return contextlib.nullcontext()
    waits_for = _waits_for(m.device, mod)
    inside = [False]

    def counted(original):
        @functools.wraps(original)
        def synchronize(*args, **kwargs):
            if inside[0]:
                return original(*args, **kwargs)
            try:
                if waits_for(*args, **kwargs):
                    m._synced()
            except Exception:  # a bad argument is the call's own error to raise, below
                pass
            inside[0] = True
            try:
                with _deeper(_at_work):
                    return original(*args, **kwargs)
            finally:
                inside[0] = False
        return synchronize

    return _standing_in([(owner, "synchronize", counted(owner.synchronize)) for owner in (torch.accelerator, mod)])


def _counting_host_data(m: Measurement, mod):
    """torch.tensor(list, device=...) copies the list's values to the device below the dispatcher, unseen by
    the dispatch mode (a NumPy array or a tensor goes through it, and is seen): count those copies by wrapping
    the three functions that make them. A Python scalar (torch.tensor(0.0, device=...)) is a constant, not data
    moved, and is not counted. A float64 tensor they make on the device counts in m.float64, once: where the
    dispatch mode saw it (a NumPy array's copy), not again."""
    if mod is None:
        return contextlib.nullcontext()

    def counted(original, first):  # first: where the data is among the arguments (after self for a method)
        @functools.wraps(original)
        def make(*args, **kwargs):
            float64_before = m.float64
            with _deeper(_at_work):  # CUDA's copy of the values waits for it, as any copy in does
                out = original(*args, **kwargs)
            data = args[first] if len(args) > first else kwargs.get("data")
            try:
                if isinstance(data, (list, tuple)) and isinstance(out, torch.Tensor) \
                        and _on_measured(out.device, m.device):
                    m.h2d.append(Copy("cpu", str(out.device), _nbytes(out), dtype=out.dtype, line=learner_line()))
                if m.float64 == float64_before and not getattr(_at_work, "printing", False) \
                        and _brings_float64(out, args, m.device):
                    m.float64_lines[learner_line()] += 1
            except Exception:  # counting must never change what the learner's code does
                pass
            return out
        return make

    return _standing_in([(owner, name, counted(getattr(owner, name), first))
                         for owner, name, first in ((torch, "tensor", 0), (torch, "as_tensor", 0),
                                                    (torch.Tensor, "new_tensor", 1))])


@contextlib.contextmanager
def measure(device: torch.device | str, mode: Callable[[Measurement], CountingMode] = CountingMode):
    """Count what the code inside does on `device` (see the module docstring)::

        with measure(device) as m:
            out = learner_function(x)
        m.round_trips, m.h2d, m.kernels, m.peak_bytes

    `mode` makes the dispatch mode that counts: a subclass of CountingMode that watches more (the doctor's) gets
    the same Measurement, from one mode: each Python dispatch mode costs every operation a trip through Python.
    """
    device = torch.device(device)
    m = Measurement(device)
    mod = _device_module(device)
    peak_known = mod is not None and hasattr(mod, "reset_peak_memory_stats") and hasattr(mod, "max_memory_allocated")
    earlier_peaks: list[int] = []
    if peak_known:
        mod.reset_peak_memory_stats(device)
    with mode(m), _counting_syncs(m, mod), _counting_host_data(m, mod), _counting_stream_waits(m, mod), \
            _counting_prints(m), _keeping_peaks(mod, device, earlier_peaks), _counting_saves(m), \
            _counting_storage_reads(m):
        yield m
    if peak_known:
        m.peak_bytes = max([int(mod.max_memory_allocated(device)), *earlier_peaks])


def _counting_saves(m: Measurement):
    """torch.save of a device tensor copies each of its storages to the host, below the dispatcher (the simulator's
    pickling, CUDA's storage.cpu()): a read of the device that the mode does not see, and a per-step
    `torch.save(loss, buffer)` read back with torch.load passed "Python reads the device once". Each device
    storage a save holds counts as a blocking copy to the host."""
    if m.device.type == "cpu":
        return contextlib.nullcontext()

    def counted(original):
        @functools.wraps(original)
        def save(obj, *args, **kwargs):
            if getattr(_below, "depth", 0):
                return original(obj, *args, **kwargs)
            try:
                seen = set()
                for t in _saved_tensors(obj):
                    if _on_measured(t.device, m.device):
                        key = (id(t.untyped_storage()) if t.device.type == "cuda" else id(t))
                        if key not in seen:
                            seen.add(key)
                            m.d2h.append(Copy(str(t.device), "cpu", _nbytes(t), dtype=t.dtype, line=learner_line()))
            except Exception:  # counting must never change what the learner's code does
                pass
            with _deeper(_below):  # its storages' own copies (CUDA's storage.cpu()) are this one
                return original(obj, *args, **kwargs)
        return save

    import torch.serialization

    owners = [torch] + ([torch.serialization] if torch.serialization.save is torch.save else [])
    return _standing_in([(owner, "save", counted(owner.save)) for owner in owners])


_below = threading.local()  # depth of counted calls (a save, a storage's copy) on this thread


def _counting_storage_reads(m: Measurement):
    """A tensor's storage read on the host (`t.untyped_storage().cpu()`, `.tolist()`, `storage[i]`,
    `.to("cpu")`, `host.copy_(storage)`) copies device memory below the dispatcher: each counts as a blocking
    copy to the host (one per call, whatever it calls inside). The simulator's storage class overrides some."""
    if m.device.type == "cpu":
        return contextlib.nullcontext()

    def on_measured(storage) -> bool:
        device = getattr(storage, "device", None)
        return isinstance(device, torch.device) and _on_measured(device, m.device)

    def counted(original, name):
        @functools.wraps(original)
        def read(self, *args, **kwargs):
            if getattr(_below, "depth", 0):
                return original(self, *args, **kwargs)
            with _deeper(_below):
                out = original(self, *args, **kwargs)
            try:
                source = args[0] if name == "copy_" and args else self
                to_host = (name in ("tolist", "__getitem__") or name == "copy_" and self.device.type == "cpu"
                           or getattr(getattr(out, "device", None), "type", None) == "cpu")
                if to_host and on_measured(source):
                    m.d2h.append(Copy(str(source.device), "cpu", int(source.nbytes()), line=learner_line()))
            except Exception:  # counting must never change what the learner's code does
                pass
            return out
        return read

    owners = [torch.UntypedStorage]
    simulated = sys.modules.get("grader.simulated.storage")
    if simulated is not None:
        owners.append(simulated.SimStorage)
    return _standing_in([(owner, name, counted(getattr(owner, name), name)) for owner in owners
                         for name in ("cpu", "tolist", "__getitem__", "to", "copy_")
                         if callable(getattr(owner, name, None)) and (owner is torch.UntypedStorage
                                                                      or name in vars(owner))])


def _saved_tensors(obj, depth: int = 6):
    """The tensors a save holds: in containers, and a module's parameters and buffers."""
    if isinstance(obj, torch.nn.Module):
        yield from obj.state_dict(keep_vars=True).values()
    elif isinstance(obj, torch.Tensor):
        yield obj
    elif depth > 0 and isinstance(obj, (list, tuple, set)):
        for x in obj:
            yield from _saved_tensors(x, depth - 1)
    elif depth > 0 and isinstance(obj, dict):
        for x in obj.values():
            yield from _saved_tensors(x, depth - 1)


#: The device modules' functions that start a memory statistic again: the checks read those statistics.
RESETS = ("reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
          "reset_accumulated_memory_stats")


def statistics_kept(device: torch.device | None):
    """While learner code runs, the memory statistics of the leg's kind of device (the device module's and
    torch.accelerator's) cannot be started again: a check reads them around the call, also for another device
    than the leg's (resume_training: the one that saved a checkpoint), and a reset there, after loading onto it
    and freeing, erased the bytes. A fix never resets them; the learner's own reads still work."""
    mod = _device_module(torch.device(device)) if device is not None else None
    if mod is None:
        return contextlib.nullcontext()

    def kept(original):
        @functools.wraps(original)
        def reset(*args, **kwargs):
            return None
        return reset

    owners = [(owner, name) for owner in (mod, torch.accelerator) for name in RESETS
              if callable(getattr(owner, name, None))]
    return _standing_in([(owner, name, kept(getattr(owner, name))) for owner, name in owners])


def _keeping_peaks(mod, device: torch.device, peaks: list[int]):
    """The peak is the device module's own statistic, which code inside the block could start again
    (reset_peak_memory_stats(), after a loop that kept every batch's graph alive, made its growth vanish): each
    reset of it, by any of torch's functions that reset it, first keeps the peak so far in `peaks`. A grading does
    more (statistics_kept: no reset at all, for the checks that read other statistics); the doctor measures the
    learner's own script, whose resets must still work for its own prints."""
    if mod is None or not callable(getattr(mod, "max_memory_allocated", None)):
        return contextlib.nullcontext()

    def keeping(original):
        @functools.wraps(original)
        def reset(*args, **kwargs):
            try:
                peaks.append(int(mod.max_memory_allocated(device)))
            except Exception:  # measuring must never change what the learner's code does
                pass
            return original(*args, **kwargs)
        return reset

    owners = [(mod, name) for name in ("reset_peak_memory_stats", "reset_max_memory_allocated")]
    owners += [(torch.accelerator, name) for name in ("reset_peak_memory_stats",)]
    return _standing_in([(owner, name, keeping(getattr(owner, name))) for owner, name in owners
                         if callable(getattr(owner, name, None))])
