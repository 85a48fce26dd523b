"""Fidelity suite: the same small snippets run on a real device and on the sim.

Each case is a function taking a device string ("cuda", "sim", ...) and
returning a small value (or raising).  ``run_all(device_type)`` records per
case whether it raised, the exception type, the message with the device type
normalised to ``<dev>``, and a value summary.

    python -m tests.simulated.fidelity --device cuda --out fidelity_cuda.json
    python -m tests.simulated.fidelity --device sim --markdown
    python -m tests.simulated.fidelity --markdown-from grader/simulated/fidelity_cuda.json

Cases marked ``needs_2`` are recorded as skipped where fewer than two devices
exist.  The committed real-GPU table is ``grader/simulated/fidelity_cuda.json``;
``tests/simulated/test_fidelity.py`` compares the simulator against it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

import torch

CASES: list = []  # (name, fn, needs_2)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MiB = 2**20

_DEV_RE = re.compile(r"(?i)(?<![a-z])(cuda|sim|mps|privateuseone)(?![a-z])")
_SPARSE_KEY = re.compile(r"Sparse(CUDA|SIM|MPS|PrivateUse1)")


def normalise(text: str) -> str:
    """Replace the device type by ``<dev>`` (cuda:0 -> <dev>:0, torch.cuda.X -> torch.<dev>.X)."""
    text = _SPARSE_KEY.sub("Sparse<dev>", _DEV_RE.sub("<dev>", text))
    # C++ exception texts may end with a source location on some builds
    return text.strip()


# What follows an error's own text on some devices and builds: CUDA's note on kernel errors, the simulator's,
# a C++ stack trace.
_TEXT_END = re.compile(r"\n(?:CUDA|SIM) kernel errors|\n\(simulated device|\nException raised from")


def error_text(exc: BaseException) -> str:
    """An error's own text, without what the device or the build appends to it."""
    return _TEXT_END.split(str(exc))[0]


def comparable(message: str | None) -> str | None:
    """What must agree between the simulator and CUDA: all of a message, except that the dispatcher's "Could not
    run 'op' with arguments from the '<dev>' backend" goes on to list where the op's kernels were registered in
    this build's C++ sources, which no two builds share."""
    if message and message.startswith("Could not run '"):
        return message.split(" This could be because", 1)[0]
    if message:  # a sparse kernel's dispatch key, in a generated check's name (recorded before normalise knew it)
        message = _SPARSE_KEY.sub("Sparse<dev>", message)
    return message


def case(name, needs_2=False):
    def deco(fn):
        CASES.append((name, fn, needs_2))
        return fn

    return deco


def _summ(v):
    if isinstance(v, torch.Tensor):
        s = f"tensor{tuple(v.shape)} {str(v.dtype).replace('torch.', '')} on {normalise(str(v.device))}"
        if v.numel() <= 8 and v.device.type == "cpu" and not v.requires_grad:
            s += " " + str([round(float(x), 4) for x in v.flatten().tolist()])
        return s
    if isinstance(v, float):
        return repr(round(v, 4))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_summ(x) for x in v) + "]"
    if isinstance(v, torch.device):
        return normalise(str(v))
    if isinstance(v, torch.dtype):
        return str(v).replace("torch.", "")
    return normalise(repr(v))


# ---------------------------------------------------------------- placement
@case("mix device with cpu tensor")
def _c_mix(dev):
    return torch.ones(3, device=dev) + torch.ones(3)


@case("mix cpu with device tensor")
def _c_mix_rev(dev):
    return torch.ones(3) + torch.ones(3, device=dev)


@case("in-place cpu += device tensor")
def _c_mix_inplace(dev):
    x = torch.ones(3)
    x += torch.ones(3, device=dev)
    return x


@case("mix :0 with :1", needs_2=True)
def _c_mix01(dev):
    return torch.ones(3, device=f"{dev}:0") + torch.ones(3, device=f"{dev}:1")


@case("mix :1 with :0", needs_2=True)
def _c_mix10(dev):
    return torch.ones(3, device=f"{dev}:1") * torch.ones(3, device=f"{dev}:0")


@case("0-dim cpu scalar mixes")
def _c_scalar(dev):
    return torch.ones(3, device=dev) * torch.tensor(2.0)


@case("1-element 1-dim cpu tensor does not mix")
def _c_one_elem(dev):
    return torch.ones(3, device=dev) * torch.tensor([2.0])


@case("matmul device @ cpu")
def _c_matmul(dev):
    return torch.ones(2, 3, device=dev) @ torch.ones(3, 2)


@case("Linear on device, input on cpu")
def _c_linear_cpu_input(dev):
    return torch.nn.Linear(3, 2).to(dev)(torch.ones(4, 3))


@case("Linear on cpu, input on device")
def _c_linear_dev_input(dev):
    return torch.nn.Linear(3, 2)(torch.ones(4, 3, device=dev))


@case("Conv2d on device, input on cpu")
def _c_conv_cpu_input(dev):
    return torch.nn.Conv2d(1, 2, 3).to(dev)(torch.ones(1, 1, 5, 5))


@case("Conv2d on cpu, input on device")
def _c_conv_dev_input(dev):
    return torch.nn.Conv2d(1, 2, 3)(torch.ones(1, 1, 5, 5, device=dev))


@case("Embedding on device, cpu indices")
def _c_embedding(dev):
    return torch.nn.Embedding(5, 2).to(dev)(torch.tensor([1, 2]))


@case("cross_entropy cpu target")
def _c_ce_cpu_target(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.tensor([0, 1]))


@case("cpu index into device tensor")
def _c_cpu_index(dev):
    return torch.arange(5.0, device=dev)[torch.tensor([1, 3])].cpu()


@case("cpu mask into device tensor")
def _c_cpu_mask(dev):
    x = torch.arange(4.0, device=dev)
    return x[torch.tensor([True, False, True, False])].cpu()


@case("device index into cpu tensor")
def _c_dev_index(dev):
    return torch.arange(5.0)[torch.tensor([1, 3], device=dev)]


@case("numpy on device tensor")
def _c_numpy(dev):
    return torch.ones(2, device=dev).numpy()


@case("torch.tensor of device scalars")
def _c_tensor_of_scalars(dev):
    a = torch.tensor(1.5, device=dev)
    b = torch.tensor(2.5, device=dev)
    return torch.tensor([a, b])


@case("torch.tensor of device scalars with device=")
def _c_tensor_of_scalars_dev(dev):
    a = torch.tensor(1.5, device=dev)
    return torch.tensor([a, a], device=dev)


@case("torch.stack of device scalars")
def _c_stack(dev):
    return torch.stack([torch.tensor(1.0, device=dev), torch.tensor(2.0, device=dev)])


@case("float() of device scalar")
def _c_float(dev):
    return float(torch.tensor(3.25, device=dev))


@case("item of device tensor")
def _c_item(dev):
    return torch.ones(1, device=dev).sum().item()


@case("tolist of device tensor")
def _c_tolist(dev):
    return torch.arange(3.0, device=dev).tolist()


@case("invalid device index")
def _c_invalid_index(dev):
    return torch.zeros(1, device=f"{dev}:7")


@case("load checkpoint with map_location cpu")
def _c_load_map(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2, device=dev)}, buf)
    buf.seek(0)
    return torch.load(buf, map_location="cpu")["w"]


@case("load checkpoint without map_location")
def _c_load_nomap(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2, device=dev)}, buf)
    buf.seek(0)
    return torch.load(buf)["w"]


def _load_elsewhere(dev, setup="", within=""):
    """Save a checkpoint on `dev`, load it without map_location in a subprocess that runs `setup` and loads
    inside `within` (a with-statement's head) with CUDA hidden; re-raise what the subprocess got."""
    fd, path = tempfile.mkstemp(suffix=".pt")
    os.close(fd)
    load = f"    with {within}:\n        torch.load({path!r})\n" if within else f"    torch.load({path!r})\n"
    try:
        torch.save({"w": torch.ones(2, device=dev)}, path)
        code = (
            f"import sys; sys.path.insert(0, {_ROOT!r})\n"
            "import json, torch, grader.simulated\n"
            f"{setup}"
            "try:\n"
            f"{load}"
            "    print(json.dumps(None))\n"
            "except Exception as e:\n"
            "    print(json.dumps([type(e).__name__, str(e)]))\n"
        )
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        out = json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(path)
    if out is None:
        return "loaded"
    exc = {"RuntimeError": RuntimeError, "TypeError": TypeError, "ValueError": ValueError}.get(out[0], RuntimeError)
    raise exc(out[1])


@case("load checkpoint without map_location where device is missing")
def _c_load_missing(dev):
    """Loaded where CUDA is hidden / sim is not installed. grader.simulated is imported (not installed) as in
    a grader's CPU process: on CUDA it changes nothing; for sim it words the error as CUDA does
    (grader/simulated/serialization.py)."""
    return _load_elsewhere(dev)


@case("load checkpoint without map_location where the accelerator has no usable device")
def _c_load_unusable(dev):
    """The build has the accelerator, the machine no device of it: a CUDA wheel with no visible GPU; the
    simulator installed, inside grader.simulated.unusable()."""
    if dev == "sim":
        return _load_elsewhere(dev, "grader.simulated.install(count=2)\n", "grader.simulated.unusable()")
    return _load_elsewhere(dev)


# ---------------------------------------------------------------- works on device
@case("Linear forward")
def _c_linear(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2).to(dev)
    return m(torch.ones(3, 4, device=dev)).sum().item()


@case("backward")
def _c_backward(dev):
    torch.manual_seed(0)
    w = torch.ones(3, device=dev, requires_grad=True)
    (w * torch.arange(3.0, device=dev)).sum().backward()
    return w.grad


@case("backward on :1", needs_2=True)
def _c_backward1(dev):
    w = torch.ones(3, device=f"{dev}:1", requires_grad=True)
    (w * 2).sum().backward()
    return w.grad


@case("to between :0 and :1", needs_2=True)
def _c_to01(dev):
    return torch.ones(2, device=f"{dev}:0").to(f"{dev}:1") + torch.ones(2, device=f"{dev}:1")


@case("Adam step keeps state on device")
def _c_adam(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(2, 3, device=dev)).sum().backward()
    opt.step()
    return [v.device for v in opt.state[m.weight].values() if isinstance(v, torch.Tensor) and v.dim() > 0]


@case("non_blocking to cpu then sync")
def _c_nb_sync(dev):
    x = torch.arange(4.0, device=dev)
    y = x.to("cpu", non_blocking=True)
    getattr(torch, dev).synchronize()
    return [y, y.is_pinned()]


@case("pin_memory and is_pinned")
def _c_pin(dev):
    return [torch.ones(2).pin_memory().is_pinned(), torch.ones(2).is_pinned()]


@case("current_accelerator")
def _c_accel(dev):
    return torch.accelerator.current_accelerator()


@case("bool of multi-element device tensor")
def _c_bool_multi(dev):
    return bool(torch.ones(2, device=dev))


@case("item of multi-element device tensor")
def _c_item_multi(dev):
    return torch.ones(2, device=dev).item()


# ---------------------------------------------------------------- torch.accelerator, streams, events (issue 11)
def _mod(dev):
    return getattr(torch, dev)


@contextlib.contextmanager
def _sync_errors(dev):
    """Inside, an operation that makes the host wait for the device raises (set_sync_debug_mode("error"))."""
    _mod(dev).set_sync_debug_mode("error")
    try:
        yield
    finally:
        _mod(dev).set_sync_debug_mode(0)


@case("torch.accelerator.synchronize")
def _c_acc_sync(dev):
    x = torch.ones(4, device=dev) * 2
    torch.accelerator.synchronize()
    torch.accelerator.synchronize(0)
    return x.sum().item()


@case("torch.accelerator current_stream and set_stream")
def _c_acc_stream(dev):
    s = torch.accelerator.current_stream()
    torch.accelerator.set_stream(s)
    return [s.device, torch.accelerator.current_stream() == s, isinstance(s, torch.Stream)]


@case("torch.Stream on the device")
def _c_torch_stream(dev):
    s = torch.Stream(device=dev)
    s.synchronize()
    return [s.device, s.query()]


@case("torch.Event elapsed_time after synchronize")
def _c_torch_event(dev):
    start = torch.Event(device=dev, enable_timing=True)
    end = torch.Event(device=dev, enable_timing=True)
    x = torch.ones(256, 256, device=dev)
    start.record()
    for _ in range(10):
        x = x @ x / 256
    end.record()
    end.synchronize()
    return [start.elapsed_time(end) > 0, end.query()]


@case("torch.Event(device=...) keeps the device type only until recorded")
def _e_generic_event_device(dev):
    e = torch.Event(device=f"{dev}:0")
    before = e.device
    e.record(torch.accelerator.current_stream(torch.device(dev, 0)))
    return [before, e.device]


@case("torch.Event(device=':1') without a stream is recorded on the current device", needs_2=True)
def _e_generic_event_on_current(dev):
    e = torch.Event(device=f"{dev}:1")
    e.record()
    f = torch.Event(device=f"{dev}:0")
    with torch.accelerator.device_index(1):
        f.record()
    return [e.device, f.device]


@case("device Event elapsed_time without enable_timing")
def _c_event_no_timing(dev):
    a, b = _mod(dev).Event(), _mod(dev).Event()
    a.record()
    b.record()
    b.synchronize()
    return a.elapsed_time(b)


@case("torch.accelerator memory counters")
def _c_acc_memory(dev):
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats()
    base = torch.accelerator.memory_allocated()
    x = torch.empty(1000, device=dev)
    grown = torch.accelerator.memory_allocated() - base
    del x
    return [grown, torch.accelerator.max_memory_allocated() - base, torch.accelerator.memory_allocated() - base]


@case("torch.accelerator.current_device_index after set_device_index", needs_2=True)
def _c_acc_index(dev):
    prev = torch.accelerator.current_device_index()
    torch.accelerator.set_device_index(1)
    try:
        return [torch.accelerator.current_device_index(), torch.ones(1, device=dev).device]
    finally:
        torch.accelerator.set_device_index(prev)


@case("torch.accelerator.device_index context", needs_2=True)
def _c_acc_index_ctx(dev):
    with torch.accelerator.device_index(1):
        inside = torch.empty(1, device=dev).device
    return [inside, torch.accelerator.current_device_index()]


@case("a loop of query() on the current stream ends")
def _c_query_loop(dev):
    x = torch.ones(1 << 20, device=dev)
    for _ in range(20):
        x = x * 1.0001
    stream = torch.get_device_module(dev).current_stream()
    while not stream.query():
        pass
    return stream.query()


@case("a non_blocking copy to pinned memory has landed once an event recorded after it answers query()")
def _c_query_event_copy(dev):
    x = torch.arange(4.0, device=dev) * 2
    for _ in range(20):
        x = x * 1.0
    host = torch.empty(4, pin_memory=True)
    host.copy_(x, non_blocking=True)
    event = torch.get_device_module(dev).Event()
    event.record()
    while not event.query():
        pass
    return host


# ---------------------------------------------------------------- optimizer state left behind (issue 7/11)
def _state_left_on_cpu(dev, opt_cls, **kw):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    opt = opt_cls(m.parameters(), **kw)
    m(torch.ones(4, 3)).sum().backward()
    opt.step()
    opt.zero_grad()
    m.to(dev)
    m(torch.ones(4, 3, device=dev)).sum().backward()
    opt.step()
    return m.weight


@case("Adam state on cpu after model.to(device)")
def _c_adam_left(dev):
    return _state_left_on_cpu(dev, torch.optim.Adam)


@case("AdamW state on cpu after model.to(device)")
def _c_adamw_left(dev):
    return _state_left_on_cpu(dev, torch.optim.AdamW)


@case("SGD momentum buffer on cpu after model.to(device)")
def _c_sgd_left(dev):
    return _state_left_on_cpu(dev, torch.optim.SGD, lr=0.1, momentum=0.9)


@case("Adam foreach=False state on cpu after model.to(device)")
def _c_adam_loop_left(dev):
    return _state_left_on_cpu(dev, torch.optim.Adam, foreach=False)


@case("model.to(device) keeps Parameter objects")
def _c_param_identity(dev):
    m = torch.nn.Linear(3, 2)
    w = m.weight
    m.to(dev)
    same = m.weight is w
    m.cpu()
    return [same, m.weight is w, w.device]


@case("optimizer built before model.to(device) trains the model")
def _c_opt_before_move(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.to(dev)
    before = m.weight.detach().cpu().clone()
    m(torch.ones(2, 3, device=dev)).sum().backward()
    opt.step()
    return [torch.allclose(m.weight.detach().cpu(), before - 0.2), m.weight.device]


# ---------------------------------------------------------------- pinned memory (issue 11)
@case("pin_memory of a device tensor")
def _c_pin_device(dev):
    return torch.ones(2, device=dev).pin_memory()


@case("is_pinned of a device tensor")
def _c_is_pinned_device(dev):
    return torch.ones(2, device=dev).is_pinned()


@case("non_blocking upload from pinned memory, then use")
def _c_nb_h2d_pinned(dev):
    x = torch.arange(4.0).pin_memory()
    y = x.to(dev, non_blocking=True)
    return (y * 2).cpu()


@case("non_blocking upload from pageable memory, then host write")
def _c_nb_h2d_pageable(dev):
    x = torch.arange(4.0)
    y = x.to(dev, non_blocking=True)
    x.zero_()  # pageable memory is staged before the call returns
    return y.cpu()


@case("non_blocking upload from pinned memory, host write after synchronize")
def _c_nb_h2d_sync_write(dev):
    x = torch.arange(4.0).pin_memory()
    y = x.to(dev, non_blocking=True)
    torch.accelerator.synchronize()
    x.zero_()
    return y.cpu()


@case("combined to(device, float16): peak device memory, blocking and non_blocking")
def _c_to_half_peak(dev):
    # copy_kernel_cuda converts on the device when non_blocking: float32 crosses into a temporary of its own
    # dtype (issue 27; 96 MiB against 32 MiB for 64 MiB of float32 on an H100)
    x = torch.ones(1024, 1024)  # 4 MiB of float32
    peaks = []
    for non_blocking in (False, True):
        torch.accelerator.synchronize(dev)
        base = torch.accelerator.memory_allocated(dev)
        torch.accelerator.reset_peak_memory_stats(dev)
        y = x.to(dev, torch.float16, non_blocking=non_blocking)
        torch.accelerator.synchronize(dev)
        peaks.append((torch.accelerator.max_memory_allocated(dev) - base) / 2**20)
        del y
    return peaks


@case("combined to(device, float16, non_blocking=True) from pinned memory, then use")
def _c_to_half_pinned(dev):
    x = torch.linspace(-2, 2, 8).pin_memory()
    y = x.to(dev, torch.float16, non_blocking=True)
    return [(y * 2).cpu().tolist(), y.dtype]


@case("combined to(cpu, float64, non_blocking=True), then synchronize")
def _c_to_double_back(dev):
    x = torch.linspace(-2, 2, 8, device=dev)
    y = x.to("cpu", torch.float64, non_blocking=True)
    torch.accelerator.synchronize(dev)
    return [y.tolist(), y.dtype, y.is_pinned()]


@case("pin_memory=True factories give pinned CPU tensors")
def _c_pinned_factories(dev):
    made = [torch.empty(3, pin_memory=True), torch.zeros(2, 2, pin_memory=True), torch.ones(3, pin_memory=True),
            torch.full((2,), 7.0, pin_memory=True), torch.empty_like(torch.ones(2), pin_memory=True),
            torch.arange(3, pin_memory=True), torch.tensor([1.0, 2.0], pin_memory=True),
            torch.ones(2).new_zeros(3, pin_memory=True)]
    return [(t.device, t.is_pinned()) for t in made]


@case("pinned torch.empty as the target of a non_blocking copy back, then synchronize")
def _c_pinned_empty_copy_back(dev):
    x = torch.arange(6.0, device=dev) * 3
    host = torch.empty(6, pin_memory=True)
    host.copy_(x, non_blocking=True)
    torch.accelerator.synchronize(dev)
    return host.tolist()


@case("pin_memory=True for a device tensor")
def _c_pinned_device_factory(dev):
    return torch.empty(2, device=dev, pin_memory=True)


# ---------------------------------------------------------------- generators (issue 11)
@case("device Generator reproduces randn")
def _c_gen_device(dev):
    g = torch.Generator(device=dev)
    g.manual_seed(0)
    a = torch.randn(3, generator=g, device=dev)
    g.manual_seed(0)
    b = torch.randn(3, generator=g, device=dev)
    return [g.device, torch.equal(a, b), isinstance(g, torch.Generator)]


@case("device manual_seed reproduces rand")
def _c_dev_manual_seed(dev):
    _mod(dev).manual_seed(1)
    a = torch.rand(3, device=dev)
    _mod(dev).manual_seed(1)
    return torch.equal(a, torch.rand(3, device=dev))


@case("torch.manual_seed reproduces device dropout")
def _c_manual_seed_dropout(dev):
    x = torch.ones(64, device=dev)
    torch.manual_seed(3)
    a = torch.nn.functional.dropout(x, 0.5)
    torch.manual_seed(3)
    return torch.equal(a, torch.nn.functional.dropout(x, 0.5))


@case("cpu Generator for a device randn")
def _c_gen_cpu_for_device(dev):
    return torch.randn(3, device=dev, generator=torch.Generator())


@case("device get_rng_state / set_rng_state")
def _c_rng_state(dev):
    st = _mod(dev).get_rng_state()
    a = torch.rand(2, device=dev)
    _mod(dev).set_rng_state(st)
    return [torch.equal(a, torch.rand(2, device=dev)), st.device, st.dtype]


# ---------------------------------------------------------------- memory (issue 11)
@case("allocated bytes are rounded to 512-byte blocks")
def _c_blocks(dev):
    torch.accelerator.synchronize()
    base = torch.accelerator.memory_allocated()
    out = []
    for n in (1, 511, 512, 513, 1100, 4000):
        t = torch.empty(n, dtype=torch.uint8, device=dev)
        out.append(torch.accelerator.memory_allocated() - base)
        del t
    return out


@case("a large request reserves a 2 MiB-rounded segment; empty_cache returns it")
def _c_large_segment(dev):
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    r0 = torch.accelerator.memory_reserved()
    t = torch.empty(24 * MiB + 1, dtype=torch.uint8, device=dev)
    r1 = torch.accelerator.memory_reserved() - r0
    del t
    r2 = torch.accelerator.memory_reserved() - r0
    torch.accelerator.empty_cache()
    return [r1 // MiB, r2 // MiB, (torch.accelerator.memory_reserved() - r0) // MiB]


@case("256 MiB allocated, freed and reused from the cache")
def _c_cache_reuse(dev):
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    r0 = torch.accelerator.memory_reserved()
    a = torch.empty(256 * MiB, dtype=torch.uint8, device=dev)
    del a
    b = torch.empty(256 * MiB, dtype=torch.uint8, device=dev)
    out = [(torch.accelerator.memory_reserved() - r0) // MiB]
    del b
    torch.accelerator.empty_cache()
    return out + [(torch.accelerator.memory_reserved() - r0) // MiB]


def _oom_shape(e):
    # sizes depend on the card and on earlier cases; the process's own use includes the CUDA context
    shape = re.sub(r"\d+(\.\d+)? (bytes|KiB|MiB|GiB)", "<size>", str(e))
    shape = re.sub(r"GPU \d+", "GPU <n>", shape)
    shape = re.sub(r"(Including non-PyTorch memory, this process|Process \d+) has <size> memory in use\. ", "", shape)
    return torch.OutOfMemoryError(shape)


def _total(dev):
    if hasattr(torch.accelerator, "get_memory_info"):
        return torch.accelerator.get_memory_info()[1]
    return _mod(dev).mem_get_info()[1]


@case("out of memory: error type and message shape")
def _c_oom(dev):
    try:
        torch.empty(2 * _total(dev), dtype=torch.uint8, device=dev)
    except torch.OutOfMemoryError as e:
        raise _oom_shape(e) from None
    return "allocated"


@case("out of memory under set_per_process_memory_fraction")
def _c_oom_fraction(dev):
    mod = _mod(dev)
    mod.set_per_process_memory_fraction(0.01, 0)
    try:
        torch.empty(_total(dev) // 50, dtype=torch.uint8, device=dev)
    except torch.OutOfMemoryError as e:
        raise _oom_shape(e) from None
    finally:
        mod.set_per_process_memory_fraction(1.0, 0)
    return "allocated"


@case("out of memory inside backward: backward() raises it")
def _c_oom_backward(dev):
    mod = _mod(dev)
    w = torch.ones(_total(dev) // 200, device=dev, requires_grad=True)  # 2% of the device, in float32
    loss = (w * 2).sum()
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()  # so the gradient cannot reuse w * 2's freed block
    mod.set_per_process_memory_fraction(0.01, 0)
    try:
        loss.backward()
    except Exception as e:  # noqa: BLE001 -- the type that crosses the engine is part of the answer
        shaped = _oom_shape(e)
        raise (shaped if isinstance(e, torch.OutOfMemoryError) else type(e)(str(shaped))) from None
    finally:
        mod.set_per_process_memory_fraction(1.0, 0)
    return "no error"


# ---------------------------------------------------------------- second device (issue 7)
@case("optimizer step on :1", needs_2=True)
def _c_opt1(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1).to(f"{dev}:1")
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(2, 3, device=f"{dev}:1")).sum().backward()
    opt.step()
    return [v.device for v in opt.state[m.weight].values() if isinstance(v, torch.Tensor) and v.dim() > 0]


@case("Linear on :1, input on :0", needs_2=True)
def _c_linear01(dev):
    return torch.nn.Linear(3, 2).to(f"{dev}:1")(torch.ones(4, 3, device=f"{dev}:0"))


@case("set_device(1) then .to(dev) and factories", needs_2=True)
def _c_set_device(dev):
    mod = _mod(dev)
    prev = mod.current_device()
    mod.set_device(1)
    try:
        return [torch.ones(1).to(dev).device, torch.zeros(1, device=dev).device, mod.current_device()]
    finally:
        mod.set_device(prev)


@case("device(1) context", needs_2=True)
def _c_device_ctx(dev):
    with _mod(dev).device(1):
        inside = [torch.ones(1, device=dev).device, _mod(dev).current_device()]
    return inside + [_mod(dev).current_device()]


@case("backward across :0 and :1", needs_2=True)
def _c_backward_01(dev):
    w = torch.ones(3, device=f"{dev}:0", requires_grad=True)
    (w.to(f"{dev}:1") * 2).sum().backward()
    return w.grad


# ---------------------------------------------------------------- AMP, attention, compile (issue 11)
@case("autocast bfloat16: linear, softmax, loss dtypes")
def _c_autocast(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4).to(dev)
    x = torch.randn(2, 4, device=dev)
    with torch.autocast(device_type=dev, dtype=torch.bfloat16):
        y = m(x)
        p = torch.softmax(y, -1)
        loss = torch.nn.functional.mse_loss(y, torch.zeros_like(y))
    loss.backward()
    return [y.dtype, p.dtype, loss.dtype, m.weight.grad.dtype]


@case("autocast bfloat16 scaled_dot_product_attention")
def _c_autocast_sdpa(dev):
    q = torch.randn(1, 2, 4, 8, device=dev)
    with torch.autocast(device_type=dev, dtype=torch.bfloat16):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).dtype


@case("autocast binary_cross_entropy is refused")
def _c_autocast_bce(dev):
    p = torch.full((2,), 0.5, device=dev)
    with torch.autocast(device_type=dev, dtype=torch.bfloat16):
        return torch.nn.functional.binary_cross_entropy(p, torch.ones(2, device=dev))


@case("MultiheadAttention forward and backward")
def _c_mha(dev):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).to(dev)
    q = torch.randn(2, 3, 8, device=dev)
    o, w = mha(q, q, q)
    o.sum().backward()
    return [o.shape, w.device, mha.in_proj_weight.grad.device]


@case("torch.compile of a function on device tensors")
def _c_compile(dev):
    f = torch.compile(lambda x: torch.sin(x) + 1)
    return f(torch.zeros(3, device=dev)).cpu()


# ---------------------------------------------------------------- patterns the book teaches
@case("register_buffer moves with the module")
def _c_buffer(dev):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.ones(2))
            self.plain = torch.ones(2)

    m = M().to(dev)
    return [m.scale.device, m.plain.device, list(m.state_dict())]


@case("plain tensor attribute stays behind after module.to(device)")
def _c_plain_attr(dev):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.scale = torch.ones(2)  # not a buffer: .to() does not move it

        def forward(self, x):
            return self.lin(x) * self.scale

    return M().to(dev)(torch.ones(3, 2, device=dev))


@case("DataLoader pin_memory batches")
def _c_loader_pinned(dev):
    from torch.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(torch.arange(8.0).view(4, 2), torch.arange(4))
    xb, yb = next(iter(DataLoader(ds, batch_size=2, pin_memory=True)))
    x = xb.to(dev, non_blocking=True)
    return [xb.is_pinned(), yb.is_pinned(), x.device, x.sum().item()]


@case("to(other tensor) takes its device and dtype")
def _c_to_other(dev):
    other = torch.ones(1, device=dev, dtype=torch.float16)
    y = torch.arange(3.0).to(other)
    return [y.device, y.dtype, torch.arange(3).to(dev, dtype=torch.float64).dtype]


@case("to(device) of a leaf is not a leaf")
def _c_leaf(dev):
    w = torch.ones(2, requires_grad=True).to(dev)
    return [w.is_leaf, w.requires_grad, w.grad_fn is not None]


@case("to(same device) returns the same tensor; copy=True does not")
def _c_to_same(dev):
    x = torch.ones(2, device=dev)
    return [x.to(dev) is x, x.to(dev, copy=True) is x]


@case("state_dict tensors stay on the device")
def _c_state_dict(dev):
    return [v.device for v in torch.nn.Linear(2, 2).to(dev).state_dict().values()]


@case("weights_only load of a device checkpoint")
def _c_weights_only(dev):
    buf = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2).to(dev).state_dict(), buf)
    buf.seek(0)
    return [v.device for v in torch.load(buf, weights_only=True).values()]


@case("set_sync_debug_mode error on item")
def _c_sync_debug(dev):
    x = torch.ones(3, device=dev)
    with _sync_errors(dev):
        return x.sum().item()


@case("set_sync_debug_mode error ignores explicit synchronize")
def _c_sync_debug_explicit(dev):
    with _sync_errors(dev):
        _mod(dev).synchronize()
        return _mod(dev).get_sync_debug_mode()


@case("nonzero on device")
def _c_nonzero(dev):
    return torch.tensor([0.0, 1.0, 0.0, 2.0], device=dev).nonzero().cpu()


@case("numpy of a cpu copy")
def _c_numpy_cpu(dev):
    return torch.ones(2, device=dev).cpu().numpy().tolist()


@case("device_count and current_device")
def _c_count(dev):
    return [_mod(dev).device_count() >= 1, _mod(dev).current_device(), torch.accelerator.device_count() >= 1]


@case("can_device_access_peer 0 -> 1", needs_2=True)
def _c_peer(dev):
    return _mod(dev).can_device_access_peer(0, 1)


@case("get_device_properties total_memory")
def _c_props(dev):
    p = _mod(dev).get_device_properties(0)
    return [p.total_memory > 0, isinstance(p.name, str)]


# ---------------------------------------------------------------- engineers' reports (new_tensor, map_location
# callables, inference_mode views, forked DataLoader workers, synchronize, numpy(force=True), move after an error)
@case("new_tensor lands on the tensor's device", needs_2=True)
def _c_new_tensor_device(dev):
    x = torch.randn(3, device=f"{dev}:1")
    return [x.new_tensor([1, 2]).device, x.new_tensor([1.0], device=dev).device, x.new_ones(2).device]


def _saved_on_device(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.arange(3.0, device=f"{dev}:0")}, buf)
    buf.seek(0)
    return buf


@case("load device checkpoint with callable map_location")
def _c_load_callable(dev):
    return torch.load(_saved_on_device(dev), map_location=lambda storage, loc: storage)["w"]


@case("load device checkpoint with callable map_location returning None")
def _c_load_callable_none(dev):
    seen = []
    w = torch.load(_saved_on_device(dev), map_location=lambda storage, loc: seen.append(loc))["w"]
    return [w, f"{dev}:0" in seen]


@case("load device checkpoint with dict map_location to cpu")
def _c_load_dict(dev):
    return torch.load(_saved_on_device(dev), map_location={f"{dev}:0": "cpu"})["w"]


@case("load device checkpoint with map_location torch.device('cpu')")
def _c_load_device_cpu(dev):
    return torch.load(_saved_on_device(dev), map_location=torch.device("cpu"))["w"]


@case("inference_mode: view of a tensor made outside")
def _c_inference_view(dev):
    y = torch.zeros(5, device=dev)
    with torch.inference_mode():
        v = y[:, None]
        r = v + 1
    with torch.inference_mode():
        z = torch.zeros(5, device=dev)
    return [r, v.is_inference(), r.is_inference(), z[:, None].is_inference()]


@case("inference_mode: non_blocking copies of pinned batches, then a read")
def _c_inference_pinned_non_blocking(dev):
    with torch.inference_mode():
        src = torch.arange(6.0).reshape(2, 3).pin_memory()
        moved = src.to(dev, non_blocking=True)
        total = (moved * 2).sum()
    return [moved, total.item(), src.is_inference(), moved.is_inference()]


def _small_net(device):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1)).to(device)


@case("inference_mode and no_grad forward of a Sequential")
def _c_inference_model(dev):
    m = _small_net(dev)
    x = torch.ones(2, 3, device=dev)
    with torch.inference_mode():
        a = m(x)
    with torch.no_grad():
        b = m(x[:, :])
    return [a.is_inference(), a.requires_grad, b.is_inference(), b.requires_grad, (a - b).abs().max().item()]


@case("inference_mode and no_grad forward of a Sequential on :1", needs_2=True)
def _c_inference_model1(dev):
    m = _small_net(f"{dev}:1")
    x = torch.ones(2, 3, device=f"{dev}:1")
    with torch.inference_mode():
        a = m(x)[:, 0]
    with torch.no_grad():
        b = m(x)[:, 0]
    return [a.device, a.is_inference(), b.is_inference(), (a - b).abs().max().item()]


class _DeviceItems(torch.utils.data.Dataset):
    def __init__(self, dev):
        self.dev = dev

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.ones(2, device=self.dev)


@case("device tensor made in a forked DataLoader worker")
def _c_loader_fork(dev):
    """The worker is a fork of a process that has used the device; the DataLoader re-raises the worker's
    error in the parent with the worker's traceback (file paths differ): keep its first and last lines."""
    torch.ones(1, device=dev).sum()
    loader = torch.utils.data.DataLoader(_DeviceItems(dev), num_workers=1, multiprocessing_context="fork")
    try:
        return next(iter(loader))
    except RuntimeError as e:
        lines = str(e).strip().splitlines()
        return [type(e).__name__, lines[0], lines[-1]]


@case("synchronize() waits for the current device only", needs_2=True)
def _c_sync_current(dev):
    m = _mod(dev)
    m.synchronize(0)
    m.synchronize(1)
    with m.device(1):
        m._sleep(int(5e8))  # ~0.25 s of device 1
    m.synchronize()  # current device: 0
    before = m.current_stream(1).query()
    m.synchronize(1)
    return [before, m.current_stream(1).query()]


@case("torch.accelerator.synchronize() waits for the current device only", needs_2=True)
def _c_acc_sync_current(dev):
    m = _mod(dev)
    m.synchronize(0)
    m.synchronize(1)
    with m.device(1):
        m._sleep(int(5e8))
    torch.accelerator.synchronize()
    before = m.current_stream(1).query()
    torch.accelerator.synchronize(1)
    return [before, m.current_stream(1).query()]


@case("numpy(force=True) of a device tensor")
def _c_numpy_force(dev):
    a = torch.arange(3.0, device=dev, requires_grad=True).numpy(force=True)
    return [type(a).__name__, str(a.dtype), a.tolist()]


@case("model.cpu() after catching its forward error")
def _c_move_after_error(dev):
    model = torch.nn.Linear(4, 2).to(dev)
    w = model.weight
    try:
        model(torch.randn(3, 4))
    except RuntimeError:
        model.cpu()
    return [model.weight.device, model.weight is w]


# ---------------------------------------------------------------- more placement bugs seen in the wild


@case("torch.where with a cpu condition")
def _c_where_cpu_cond(dev):
    a = torch.ones(3, device=dev)
    return torch.where(torch.tensor([True, False, True]), a, a * 2)


@case("torch.cat of a cpu and a device tensor")
def _c_cat_mixed(dev):
    return torch.cat([torch.ones(2), torch.ones(2, device=dev)])


@case("index_select with a cpu index")
def _c_index_select_cpu(dev):
    return torch.arange(6.0, device=dev).index_select(0, torch.tensor([0, 2]))


@case("gather with a cpu index")
def _c_gather_cpu(dev):
    return torch.arange(6.0, device=dev).view(2, 3).gather(1, torch.tensor([[0], [2]]))


@case("scatter_add_ with a cpu index")
def _c_scatter_add_cpu(dev):
    return torch.zeros(3, device=dev).scatter_add_(0, torch.tensor([0, 0, 2]), torch.ones(3, device=dev))


@case("index_add_ with a cpu index")
def _c_index_add_cpu(dev):
    return torch.zeros(3, device=dev).index_add_(0, torch.tensor([0, 2]), torch.ones(2, device=dev))


@case("masked_fill with a cpu mask")
def _c_masked_fill_cpu_mask(dev):
    return torch.ones(3, device=dev).masked_fill(torch.tensor([True, False, True]), 0.0)


@case("masked_fill with a 0-dim cpu value")
def _c_masked_fill_cpu_value(dev):
    x = torch.ones(3, device=dev)
    return x.masked_fill(x > 0, torch.tensor(5.0)).cpu()


@case("clamp with cpu tensor bounds")
def _c_clamp_cpu_bounds(dev):
    return torch.arange(3.0, device=dev).clamp(min=torch.ones(3))


@case("device tensor += cpu tensor")
def _c_iadd_cpu(dev):
    a = torch.ones(3, device=dev)
    a += torch.ones(3)
    return a


@case("einsum across devices")
def _c_einsum_mixed(dev):
    return torch.einsum("ij,jk->ik", torch.ones(2, 3, device=dev), torch.ones(3, 2))


@case("cdist of a device and a cpu tensor")
def _c_cdist_mixed(dev):
    return torch.cdist(torch.ones(2, 3, device=dev), torch.ones(4, 3))


@case("bucketize with cpu boundaries")
def _c_bucketize_cpu(dev):
    return torch.bucketize(torch.tensor([0.5, 2.5], device=dev), torch.tensor([1.0, 2.0]))


@case("LSTM on the device, initial state on the cpu")
def _c_lstm_cpu_state(dev):
    lstm = torch.nn.LSTM(4, 3).to(dev)
    h0 = torch.zeros(1, 2, 3)
    return lstm(torch.randn(5, 2, 4, device=dev), (h0, h0))[0].shape


@case("pack_padded_sequence with lengths on the device")
def _c_pack_lengths_device(dev):
    from torch.nn.utils.rnn import pack_padded_sequence

    x = torch.randn(2, 4, 3, device=dev)
    return pack_padded_sequence(x, torch.tensor([4, 2], device=dev), batch_first=True).data.shape


@case("pack_padded_sequence with lengths on the cpu")
def _c_pack_lengths_cpu(dev):
    from torch.nn.utils.rnn import pack_padded_sequence

    packed = pack_padded_sequence(torch.randn(2, 4, 3, device=dev), torch.tensor([4, 2]), batch_first=True)
    return [packed.data.device, packed.batch_sizes.device, packed.data.shape]


@case("pack, LSTM, pad and backward on the device")
def _c_packed_lstm(dev):
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    lstm = torch.nn.LSTM(3, 2, batch_first=True).to(dev)
    x = torch.randn(3, 4, 3, device=dev, requires_grad=True)
    packed = pack_padded_sequence(x, torch.tensor([2, 4, 1]), batch_first=True, enforce_sorted=False)
    out, lengths = pad_packed_sequence(lstm(packed)[0], batch_first=True)
    out.sum().backward()
    return [out.device, tuple(out.shape), lengths, x.grad.device, lstm.weight_ih_l0.grad.device]


@case("clip_grad_norm_ returns a device tensor")
def _c_clip_grad_norm(dev):
    model = torch.nn.Linear(3, 2).to(dev)
    model(torch.ones(4, 3, device=dev)).sum().backward()
    return torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).device


@case("max over a dim: values and indices on the device")
def _c_max_dim(dev):
    values, indices = torch.tensor([[1.0, 3.0], [4.0, 2.0]], device=dev).max(dim=1)
    return [values.device, indices.device, indices.dtype]


@case("one_hot of device labels")
def _c_one_hot(dev):
    return torch.nn.functional.one_hot(torch.tensor([0, 2], device=dev), 3)


@case("BatchNorm running statistics move with the module")
def _c_bn_buffers(dev):
    return [b.device for b in torch.nn.BatchNorm1d(3).to(dev).buffers()]


@case("multinomial on the device")
def _c_multinomial(dev):
    return torch.multinomial(torch.tensor([0.0, 1.0], device=dev), 2, replacement=True)


# --- ops whose CUDA kernels check devices in generated code (placement.codegen_checked) and their neighbours
@case("clamp with a 0-dim cpu bound")
def _c_clamp_cpu_scalar(dev):
    return torch.arange(3.0, device=dev).clamp(min=torch.tensor(1.0)).cpu()


@case("torch.where with a 0-dim cpu value")
def _c_where_cpu_scalar(dev):
    x = torch.arange(3.0, device=dev)
    return torch.where(x > 0, x, torch.tensor(-1.0)).cpu()


@case("lerp towards a cpu tensor")
def _c_lerp_cpu(dev):
    return torch.lerp(torch.zeros(3, device=dev), torch.ones(3), 0.5)


@case("lerp with a 0-dim cpu weight")
def _c_lerp_cpu_weight(dev):
    return torch.lerp(torch.zeros(3, device=dev), torch.ones(3, device=dev), torch.tensor(0.5)).cpu()


@case("addcmul with a cpu tensor")
def _c_addcmul_cpu(dev):
    return torch.addcmul(torch.zeros(3, device=dev), torch.ones(3), torch.ones(3, device=dev))


@case("layer_norm with a cpu weight")
def _c_layer_norm_cpu_weight(dev):
    return torch.nn.functional.layer_norm(torch.randn(2, 4, device=dev), (4,), weight=torch.ones(4))


@case("LayerNorm on the cpu, input on the device")
def _c_layer_norm_module_cpu(dev):
    return torch.nn.LayerNorm(4)(torch.randn(2, 4, device=dev))


@case("batch_norm with cpu running statistics")
def _c_batch_norm_cpu_stats(dev):
    return torch.nn.functional.batch_norm(torch.randn(4, 3, device=dev), torch.zeros(3), torch.ones(3))


@case("cross_entropy with cpu class weights")
def _c_cross_entropy_cpu_weight(dev):
    logits = torch.randn(4, 3, device=dev)
    return torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 0], device=dev), weight=torch.ones(3))


@case("embedding_bag with cpu offsets")
def _c_embedding_bag_cpu_offsets(dev):
    bag = torch.nn.EmbeddingBag(10, 3).to(dev)
    return bag(torch.tensor([1, 2, 3, 4], device=dev), torch.tensor([0, 2]))


@case("searchsorted of cpu values")
def _c_searchsorted_cpu(dev):
    return torch.searchsorted(torch.tensor([1.0, 2.0, 3.0], device=dev), torch.tensor([2.5]))


@case("grid_sample with a cpu grid")
def _c_grid_sample_cpu(dev):
    return torch.nn.functional.grid_sample(torch.randn(1, 1, 4, 4, device=dev), torch.zeros(1, 2, 2, 2),
                                           align_corners=False)


@case("PReLU on the cpu, input on the device")
def _c_prelu_cpu(dev):
    return torch.nn.PReLU()(torch.randn(3, device=dev))


@case("linalg.solve of a device matrix and a cpu right-hand side")
def _c_solve_cpu_rhs(dev):
    return torch.linalg.solve(torch.eye(2, device=dev), torch.ones(2))


@case("index_copy_ from a cpu source")
def _c_index_copy_cpu(dev):
    return torch.zeros(3, device=dev).index_copy_(0, torch.tensor([0, 2], device=dev), torch.ones(2))


@case("scatter_ from a cpu source")
def _c_scatter_cpu_src(dev):
    return torch.zeros(3, device=dev).scatter_(0, torch.tensor([0, 2], device=dev), torch.ones(2))


@case("take with a cpu index")
def _c_take_cpu(dev):
    return torch.take(torch.arange(4.0, device=dev), torch.tensor([0, 3]))


@case("masked_scatter_ from a cpu source")
def _c_masked_scatter_cpu(dev):
    x = torch.zeros(3, device=dev)
    return x.masked_scatter_(x == 0, torch.ones(3))


@case("assign cpu values through a device index")
def _c_index_put_cpu_values(dev):
    x = torch.zeros(4, device=dev)
    x[torch.tensor([0, 2], device=dev)] = torch.tensor([1.0, 2.0])
    return x.cpu()


@case("assign a 0-dim cpu value through a mask")
def _c_index_put_cpu_scalar(dev):
    x = torch.zeros(4, device=dev)
    x[x == 0] = torch.tensor(3.0)
    return x.cpu()


@case("normal with a device mean and a cpu std")
def _c_normal_cpu_std(dev):
    return torch.normal(torch.zeros(3, device=dev), torch.ones(3))


@case("mv of a device matrix and a cpu vector")
def _c_mv_cpu(dev):
    return torch.mv(torch.ones(2, 3, device=dev), torch.ones(3))


@case("matmul into a cpu out=")
def _c_matmul_cpu_out(dev):
    out = torch.empty(2, 2)
    return torch.matmul(torch.ones(2, 3, device=dev), torch.ones(3, 2, device=dev), out=out)


@case("bincount with cpu weights")
def _c_bincount_cpu_weights(dev):
    return torch.bincount(torch.tensor([0, 1, 1], device=dev), weights=torch.ones(3))


@case("GRU on the device, initial state on the cpu")
def _c_gru_cpu_state(dev):
    gru = torch.nn.GRU(4, 3).to(dev)
    return gru(torch.randn(5, 2, 4, device=dev), torch.zeros(1, 2, 3))[0].shape


@case("a list of layers stays on the cpu after model.to(device)")
def _c_plain_list_of_layers(dev):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [torch.nn.Linear(3, 3), torch.nn.Linear(3, 1)]  # a plain list: not registered

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    return Net().to(dev)(torch.ones(2, 3, device=dev))


@case("type() of a device tensor")
def _c_type_string(dev):
    return torch.ones(2, device=dev).type()


@case("assign a moved tensor to a Parameter attribute")
def _c_assign_moved_parameter(dev):
    model = torch.nn.Linear(2, 1)
    model.weight = model.weight.to(dev)
    return model.weight.device


@case("F.linear with a cpu bias")
def _c_linear_cpu_bias(dev):
    return torch.nn.functional.linear(torch.ones(2, 3, device=dev), torch.ones(4, 3, device=dev), torch.ones(4))


@case("mse_loss against a cpu target")
def _c_mse_cpu_target(dev):
    return torch.nn.functional.mse_loss(torch.ones(3, device=dev), torch.zeros(3))


# --- composite ops: CUDA runs them through other kernels, whose checks decide the message
@case("BCEWithLogitsLoss with a cpu pos_weight")
def _c_bce_logits_cpu_pos_weight(dev):
    loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(3))
    return loss(torch.randn(2, 3, device=dev), torch.ones(2, 3, device=dev))


@case("binary_cross_entropy against a cpu target")
def _c_bce_cpu_target(dev):
    return torch.nn.functional.binary_cross_entropy(torch.full((3,), 0.5, device=dev), torch.ones(3))


@case("allclose of a device and a cpu tensor")
def _c_allclose_mixed(dev):
    return torch.allclose(torch.ones(3, device=dev), torch.ones(3))


@case("logical_and of a device and a cpu mask")
def _c_logical_and_mixed(dev):
    return torch.logical_and(torch.ones(3, dtype=torch.bool, device=dev), torch.ones(3, dtype=torch.bool))


@case("isin of device labels in a cpu list")
def _c_isin_cpu(dev):
    return torch.isin(torch.tensor([0, 1, 2], device=dev), torch.tensor([1, 2]))


@case("index_fill_ with a cpu index")
def _c_index_fill_cpu(dev):
    return torch.zeros(3, device=dev).index_fill_(0, torch.tensor([0, 2]), 1.0)


@case("dist of a device and a cpu tensor")
def _c_dist_mixed(dev):
    return torch.dist(torch.ones(3, device=dev), torch.zeros(3))


@case("complex from a device real and a cpu imaginary part")
def _c_complex_mixed(dev):
    return torch.complex(torch.ones(2, device=dev), torch.zeros(2))


@case("masked_scatter from a cpu source")
def _c_masked_scatter_functional_cpu(dev):
    x = torch.zeros(3, device=dev)
    return x.masked_scatter(x == 0, torch.ones(3))


@case("smooth_l1_loss against a cpu target")
def _c_smooth_l1_cpu(dev):
    return torch.nn.functional.smooth_l1_loss(torch.ones(3, device=dev), torch.zeros(3))


@case("cross of a device and a cpu vector")
def _c_cross_mixed(dev):
    return torch.linalg.cross(torch.ones(3, device=dev), torch.ones(3))


@case("histogram of a device tensor")
def _c_histogram_device(dev):
    return torch.histogram(torch.arange(4.0, device=dev), bins=2)


@case("histc of a device tensor")
def _c_histc_device(dev):
    return torch.histc(torch.arange(4.0, device=dev), bins=2)


# --- DataParallel and side streams
def _dp_model(dev):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                               torch.nn.Linear(4, 2)).to(dev)


@case("DataParallel forward and backward on two devices", needs_2=True)
def _c_data_parallel_two(dev):
    model = _dp_model(f"{dev}:0")
    out = torch.nn.DataParallel(model, device_ids=[0, 1])(torch.randn(6, 3))
    out.sum().backward()
    return [out.device, tuple(out.shape), model[0].weight.grad.device, model[1].running_mean.device]


@case("DataParallel on one device")
def _c_data_parallel_one(dev):
    model = _dp_model(f"{dev}:0")
    out = torch.nn.DataParallel(model, device_ids=[0])(torch.randn(6, 3))
    return [out.device, tuple(out.shape)]


@case("DataParallel with the module on :1", needs_2=True)
def _c_data_parallel_wrong_device(dev):
    return torch.nn.DataParallel(_dp_model(f"{dev}:1"), device_ids=[0, 1])(torch.randn(6, 3))


@case("DataParallel with the module on the cpu")
def _c_data_parallel_cpu_module(dev):
    return torch.nn.DataParallel(_dp_model("cpu"), device_ids=[0])(torch.randn(6, 3, device=dev))


@case("record_stream on a side stream")
def _c_record_stream(dev):
    side = torch.get_device_module(dev).Stream()
    x = torch.ones(3, device=dev)
    side.wait_stream(torch.get_device_module(dev).current_stream())  # x is written on the current stream
    with torch.get_device_module(dev).stream(side):
        y = x * 2
    torch.get_device_module(dev).current_stream().wait_stream(side)
    y.record_stream(torch.get_device_module(dev).current_stream())
    x.record_stream(side)
    return y.cpu()



# --- races between streams (grader/simulated/races.py): a side stream spins ~50 ms (_sleep cycles at <= 2 GHz) so
# that on a GPU the race always shows; each case answers whether the read saw the write, never the raw values
# (the GPU reads what the memory held, the simulator NaN)
def _busy_side(dev, m):
    cur, side = m.current_stream(), m.Stream()
    x = torch.zeros(1 << 20, device=dev)
    side.wait_stream(cur)
    with m.stream(side):
        m._sleep(100_000_000)
        x.fill_(1.0)
    return cur, side, x


@case("a side stream's write read on the current stream without a wait")
def _c_race_no_wait(dev):
    m = torch.get_device_module(dev)
    _cur, _side, x = _busy_side(dev, m)
    saw = bool((x.sum() == x.numel()).item())
    m.synchronize()
    return [saw]


@case("a side stream's write read on the current stream after wait_stream")
def _c_race_wait_stream(dev):
    m = torch.get_device_module(dev)
    cur, side, x = _busy_side(dev, m)
    cur.wait_stream(side)
    return [bool((x.sum() == x.numel()).item())]


@case("a side stream's write read on the current stream after wait_event")
def _c_race_wait_event(dev):
    m = torch.get_device_module(dev)
    cur, side, x = _busy_side(dev, m)
    cur.wait_event(side.record_event())
    return [bool((x.sum() == x.numel()).item())]


@case("a side stream's write read after synchronize() of the current stream only")
def _c_race_current_sync(dev):
    m = torch.get_device_module(dev)
    cur, _side, x = _busy_side(dev, m)
    cur.synchronize()
    saw = bool((x.sum() == x.numel()).item())
    m.synchronize()
    return [saw]


def _freed_while_side_reads(dev, record):
    m = torch.get_device_module(dev)
    m.empty_cache()                     # 16 MiB blocks are not split: x's freed block is the only exact fit
    cur, side = m.current_stream(), m.Stream()
    x = torch.ones(4 << 20, device=dev)
    side.wait_stream(cur)
    with m.stream(side):
        m._sleep(100_000_000)
        y = x * 2                       # the side stream reads x after ~50 ms
    if record:
        x.record_stream(side)
    address = x.data_ptr()
    del x
    z = torch.full((4 << 20,), 5.0, device=dev)     # allocated and written on the current stream at once
    cur.wait_stream(side)
    return [z.data_ptr() == address, bool((y == 2).all().item())]


@case("a tensor freed while a side stream reads it: the next tensor of its stream gets the block")
def _c_freed_no_record(dev):
    return _freed_while_side_reads(dev, record=False)


@case("a tensor freed while a side stream reads it, after record_stream: other memory")
def _c_freed_record(dev):
    return _freed_while_side_reads(dev, record=True)


def _timed(dev, on_side):
    m = torch.get_device_module(dev)
    cur, side = m.current_stream(), m.Stream()
    start, end = m.Event(enable_timing=True), m.Event(enable_timing=True)
    timed = side if on_side else cur
    start.record(timed)
    with m.stream(side):
        m._sleep(40_000_000)            # at least 20 ms
    end.record(timed)
    end.synchronize()
    return start.elapsed_time(end)


@case("events on the current stream around work on a side stream measure under 5 ms")
def _c_events_wrong_stream(dev):
    return [_timed(dev, on_side=False) < 5.0]


@case("events on the side stream around its work measure at least 15 ms")
def _c_events_right_stream(dev):
    return [_timed(dev, on_side=True) >= 15.0]


@case("torch.Stream of :1 as a context makes :1 the current device, and restores :0", needs_2=True)
def _c_stream_context_device(dev):
    torch.accelerator.set_device_index(0)
    with torch.Stream(f"{dev}:1"):
        inside = torch.accelerator.current_device_index()
    return [inside, torch.accelerator.current_device_index()]


@case("backward of a forward run on a side stream runs on that side stream")
def _c_backward_stream(dev):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            Scale.stream = torch.accelerator.current_stream(grad.device)
            return grad * 2

    m = torch.get_device_module(dev)
    cur, side = m.current_stream(), m.Stream()
    w = torch.ones(4, device=dev, requires_grad=True)
    side.wait_stream(cur)
    with m.stream(side):
        loss = Scale.apply(w).sum()
    cur.wait_stream(side)
    loss.backward()
    return [Scale.stream.stream_id == side.stream_id, w.grad.tolist()]

# ---------------------------------------------------------------- common patterns of real training code (eighth session)
@case("ctc_loss with cpu length tensors")
def _c_ctc_cpu_lengths(dev):
    torch.manual_seed(0)
    log_probs = torch.randn(10, 2, 5, device=dev).log_softmax(2)
    targets = torch.randint(1, 5, (2, 4), device=dev)
    loss = torch.nn.functional.ctc_loss(log_probs, targets, torch.full((2,), 10, dtype=torch.long),
                                        torch.full((2,), 4, dtype=torch.long))
    return loss.device


@case("ctc_loss with length tuples")
def _c_ctc_tuple_lengths(dev):
    log_probs = torch.randn(10, 2, 5, device=dev).log_softmax(2)
    targets = torch.randint(1, 5, (2, 4), device=dev)
    return torch.nn.functional.ctc_loss(log_probs, targets, (10, 10), (4, 4)).device


@case("scaled_dot_product_attention with a cpu mask")
def _c_sdpa_cpu_mask(dev):
    return _attention_with_cpu_causal_mask(dev, (1, 2, 4, 8))


def _attention_with_cpu_causal_mask(dev, shape, dtype=torch.float32):
    q = torch.randn(*shape, device=dev, dtype=dtype)
    mask = torch.ones(shape[-2], shape[-2], dtype=torch.bool).tril()
    return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask).device


@case("scaled_dot_product_attention with a device mask")
def _c_sdpa_dev_mask(dev):
    q = torch.randn(1, 2, 4, 8, device=dev)
    mask = torch.ones(4, 4, dtype=torch.bool, device=dev).tril()
    return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask).device


@case("torch.equal of a cpu and a device tensor")
def _c_equal_mixed(dev):
    return torch.equal(torch.ones(2), torch.ones(2, device=dev))


@case("== of a device and a cpu tensor")
def _c_eq_mixed(dev):
    return torch.ones(2, device=dev) == torch.ones(2)


@case("pad_sequence of a device and a cpu sequence")
def _c_pad_sequence_mixed(dev):
    out = torch.nn.utils.rnn.pad_sequence([torch.ones(2, device=dev), torch.ones(3)])
    return [out.device, out.shape]


@case("write a device scalar into a cpu tensor")
def _c_cpu_setitem_device_scalar(dev):
    c = torch.zeros(3)
    c[0] = torch.tensor(5.0, device=dev)
    return c


@case("copy.deepcopy of a trained model")
def _c_deepcopy_model(dev):
    import copy

    model = torch.nn.Linear(3, 2).to(dev)
    model(torch.randn(4, 3, device=dev)).sum().backward()
    twin = copy.deepcopy(model)
    return [twin.weight.device, twin.weight.grad.device, twin.weight is model.weight,
            torch.equal(twin.weight.detach().cpu(), model.weight.detach().cpu())]


@case("set_default_device for factories and modules")
def _c_set_default_device(dev):
    torch.set_default_device(dev)
    try:
        return [torch.zeros(2).device, torch.arange(3).device, torch.nn.Linear(2, 2).weight.device,
                torch.tensor([1.0]).device, torch.zeros(2, device="cpu").device]
    finally:
        torch.set_default_device(None)


@case("with torch.device(...) for factories")
def _c_device_context(dev):
    with torch.device(dev):
        made = [torch.randn(2).device, torch.nn.Linear(2, 2).bias.device]
    return made + [torch.randn(2).device]


@case("activation checkpoint with dropout, backward")
def _c_checkpoint_dropout(dev):
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 3).to(dev)
    x = torch.randn(4, 3, device=dev, requires_grad=True)
    y = checkpoint(lambda a: torch.nn.functional.dropout(layer(a), 0.5), x, use_reentrant=False)
    y.sum().backward()
    return [x.grad.device, x.grad.shape]


@case("GradScaler scale, step and update")
def _c_grad_scaler(dev):
    model = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(dev)
    loss = model(torch.randn(2, 3, device=dev)).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return [scaler.get_scale(), model.weight.grad.device]


@case("GradScaler skips a step with an inf gradient")
def _c_grad_scaler_inf(dev):
    model = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    scaler = torch.amp.GradScaler(dev, init_scale=4.0)
    loss = (model(torch.randn(2, 3, device=dev)) * float("inf")).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return [scaler.get_scale(), torch.equal(before.cpu(), model.weight.detach().cpu())]


@case("GradScaler of the cpu for a device model")
def _c_grad_scaler_cpu(dev):
    model = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(model(torch.randn(2, 3, device=dev)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    return scaler.get_scale()


@case("torch.func.functional_call and grad on the device")
def _c_functional_call(dev):
    from torch.func import functional_call, grad

    model = torch.nn.Linear(3, 1).to(dev)
    params = dict(model.named_parameters())
    x = torch.randn(2, 3, device=dev)
    g = grad(lambda p: functional_call(model, p, (x,)).sum())(params)
    return [g["weight"].device, g["bias"].shape]


@case("vmap over device tensors")
def _c_vmap(dev):
    return torch.vmap(lambda v: v @ v)(torch.randn(3, 4, device=dev)).device


@case("Adam fused=True step")
def _c_adam_fused(dev):
    state = _adam_state_after_one_step(dev, fused=True)
    return [state["exp_avg"].device, state["step"].device]


@case("Adam capturable=True step")
def _c_adam_capturable(dev):
    return _adam_state_after_one_step(dev, capturable=True)["step"].device


@case("Adam default step: where its step counter lives")
def _c_adam_step_counter(dev):
    state = _adam_state_after_one_step(dev)
    return [state["step"].device, state["exp_avg_sq"].device]


def _adam_state_after_one_step(dev, **options):
    model = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.Adam(model.parameters(), **options)
    model(torch.randn(2, 3, device=dev)).sum().backward()
    opt.step()
    return opt.state[model.weight]


@case("distributions.Normal of a device loc and a cpu scale")
def _c_normal_distribution_mixed(dev):
    return torch.distributions.Normal(torch.zeros(2, device=dev), torch.ones(2)).sample().device


@case("distributions.Categorical sample on the device")
def _c_categorical(dev):
    return torch.distributions.Categorical(logits=torch.randn(4, 3, device=dev)).sample().device


@case("parameters_to_vector of a model split over cpu and device")
def _c_parameters_to_vector_mixed(dev):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2).to(dev))
    return torch.nn.utils.parameters_to_vector(model.parameters()).device


@case("clip_grad_norm_ of a model split over cpu and device")
def _c_clip_grad_mixed(dev):
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2).to(dev)
    b(a(torch.randn(1, 2)).to(dev)).sum().backward()
    return torch.nn.utils.clip_grad_norm_(list(a.parameters()) + list(b.parameters()), 1.0).device


@case("data_ptr: a view shares it, to(same device) too, a copy does not")
def _c_data_ptr(dev):
    x = torch.ones(4, device=dev)
    return [x.data_ptr() == x[:2].data_ptr(), x.to(dev).data_ptr() == x.data_ptr(),
            x.clone().data_ptr() == x.data_ptr(), x.data_ptr() != 0]


@case("is_cuda, is_cpu and device.type of a device tensor")
def _c_is_flags(dev):
    x = torch.ones(1, device=dev)
    return [x.is_cpu, x.device.type == dev, x.get_device()]


@case("tensor.to(device) without assignment leaves the tensor behind")
def _c_to_not_in_place(dev):
    x = torch.ones(2)
    x.to(dev)
    return x.device


@case("unique with counts on the device")
def _c_unique_counts(dev):
    values, counts = torch.unique(torch.tensor([1, 2, 2, 5], device=dev), return_counts=True)
    return [values.cpu(), counts.cpu()]


@case("topk indices used to index a cpu tensor")
def _c_topk_index_cpu(dev):
    scores = torch.tensor([0.1, 0.9, 0.5], device=dev)
    return torch.tensor([10.0, 20.0, 30.0])[scores.topk(2).indices]


@case("argmax of a device tensor indexes a python list")
def _c_argmax_list_index(dev):
    names = ["a", "b", "c"]
    return names[torch.tensor([0.1, 0.9, 0.5], device=dev).argmax()]



@case("numpy.asarray of a device tensor")
def _c_np_asarray(dev):
    import numpy as np

    return np.asarray(torch.ones(2, device=dev))


@case("torch.tensor of a device tensor")
def _c_tensor_of_tensor(dev):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [torch.tensor(torch.ones(2, device=dev)).device, torch.as_tensor(torch.ones(2, device=dev)).device]


@case("MultiheadAttention with a cpu key_padding_mask")
def _c_mha_cpu_padding_mask(dev):
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).to(dev)
    x = torch.randn(2, 3, 8, device=dev)
    mask = torch.tensor([[False, False, True], [False, False, False]])
    return mha(x, x, x, key_padding_mask=mask)[0].device


@case("TransformerEncoder (training) with a cpu padding mask")
def _c_encoder_train_cpu_mask(dev):
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).to(dev)
    mask = torch.tensor([[False, False, True], [False, False, False]])
    return enc(torch.randn(2, 3, 8, device=dev), src_key_padding_mask=mask).device


@case("TransformerEncoder (eval, no_grad) with a cpu padding mask")
def _c_encoder_eval_cpu_mask(dev):
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).to(dev).eval()
    mask = torch.tensor([[False, False, True], [False, False, False]])
    with torch.no_grad():
        return enc(torch.randn(2, 3, 8, device=dev), src_key_padding_mask=mask).device


@case("TransformerEncoder (eval, no_grad) with a device padding mask")
def _c_encoder_eval_dev_mask(dev):
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).to(dev).eval()
    mask = torch.tensor([[False, False, True], [False, False, False]], device=dev)
    with torch.no_grad():
        out = enc(torch.randn(2, 3, 8, device=dev), src_key_padding_mask=mask)
    return [out.device, out.shape]


@case("randperm on the device shuffles a cpu tensor")
def _c_randperm_device_index_cpu(dev):
    return torch.arange(4.0)[torch.randperm(4, device=dev)].sort().values


@case("randperm on the cpu shuffles a device tensor")
def _c_randperm_cpu_index_device(dev):
    return torch.arange(4.0, device=dev)[torch.randperm(4)].sort().values.cpu()



@case("torch.save of a whole model: its parameters load as parameters")
def _c_save_whole_model(dev):
    model = torch.nn.Linear(2, 2).to(dev)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    return [isinstance(loaded.weight, torch.nn.Parameter), loaded.weight.device, loaded.weight.requires_grad,
            len(list(loaded.parameters()))]


@case("torch.save of a parameter, loaded weights_only")
def _c_save_parameter(dev):
    buf = io.BytesIO()
    torch.save(torch.nn.Parameter(torch.ones(2, device=dev)), buf)
    buf.seek(0)
    loaded = torch.load(buf)
    return [isinstance(loaded, torch.nn.Parameter), loaded.device, loaded.requires_grad]


@case("copy.deepcopy of a parameter and of a tensor with a grad")
def _c_deepcopy_param_and_tensor(dev):
    import copy

    p = torch.nn.Parameter(torch.ones(2, device=dev))
    p.grad = torch.ones(2, device=dev)
    t = torch.ones(2, device=dev, requires_grad=True)
    t.grad = torch.ones(2, device=dev)
    cp, ct = copy.deepcopy(p), copy.deepcopy(t)
    return [isinstance(cp, torch.nn.Parameter), cp.grad is None, ct.grad is None, cp.device, ct.device]



@case("scaled_dot_product_attention, bfloat16, with a cpu mask")
def _c_sdpa_bf16_cpu_mask(dev):
    return _attention_with_cpu_causal_mask(dev, (2, 2, 5, 64), torch.bfloat16)


@case("scaled_dot_product_attention, head size 6, with a cpu mask")
def _c_sdpa_odd_head_cpu_mask(dev):
    return _attention_with_cpu_causal_mask(dev, (2, 2, 5, 6))


@case("scaled_dot_product_attention of 3-D inputs with a cpu float mask")
def _c_sdpa_3d_cpu_mask(dev):
    q = torch.randn(2, 5, 16, device=dev)
    return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(5, 5)).device


@case("scaled_dot_product_attention, is_causal, key and value on the cpu")
def _c_sdpa_cpu_key(dev):
    q = torch.randn(2, 2, 5, 16, device=dev)
    k = torch.randn(2, 2, 5, 16)
    return torch.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True).device


@case("scaled_dot_product_attention, key and value on :1", needs_2=True)
def _c_sdpa_key_on_1(dev):
    q = torch.randn(2, 2, 5, 16, device=f"{dev}:0")
    k = torch.randn(2, 2, 5, 16, device=f"{dev}:1")
    return torch.nn.functional.scaled_dot_product_attention(q, k, k).device


@case("scaled_dot_product_attention, float16, key and value on :1", needs_2=True)
def _c_sdpa_fp16_key_on_1(dev):
    q = torch.randn(2, 2, 5, 16, device=f"{dev}:0", dtype=torch.float16)
    k = torch.randn(2, 2, 5, 16, device=f"{dev}:1", dtype=torch.float16)
    return torch.nn.functional.scaled_dot_product_attention(q, k, k).device


@case("MultiheadAttention (need_weights=False) with a cpu attn_mask")
def _c_mha_no_weights_cpu_mask(dev):
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).to(dev)
    x = torch.randn(2, 5, 16, device=dev)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(1)
    return mha(x, x, x, attn_mask=mask, need_weights=False)[0].device



# ---------------------------------------------------------------- more everyday patterns (eighth session): running totals and CPU scalars
@case("cpu 0-dim running total += device scalar")
def _c_cpu_scalar_total(dev):
    # torchmetrics-style accumulation into a CPU 0-dim tensor: the CPU tensor is the op's output here
    total = torch.tensor(0.0)
    total += torch.ones(3, device=dev).sum()
    return total


@case("lerp with a 0-dim cpu end and a 0-dim cpu weight")
def _c_lerp_two_cpu_scalars(dev):
    return torch.lerp(torch.zeros(3, device=dev), torch.tensor(1.0), torch.tensor(0.5)).cpu()


@case("fill_ of a cpu tensor with a 0-dim device value")
def _c_cpu_fill_device_scalar(dev):
    x = torch.zeros(3)
    x.fill_(torch.tensor(2.0, device=dev))
    return x


# ---------------------------------------------------------------- indexing
@case("index a cpu tensor with a 0-dim device index")
def _c_cpu_index_device_scalar(dev):
    return torch.arange(5.0)[torch.tensor(2, device=dev)]


@case("write through a device mask into a cpu tensor")
def _c_cpu_setitem_device_mask(dev):
    x = torch.arange(4.0)
    x[torch.tensor([True, False, True, False], device=dev)] = 0.0
    return x


@case("index_put_ with accumulate and cpu values")
def _c_index_put_accumulate_cpu_values(dev):
    x = torch.zeros(3, device=dev)
    return x.index_put_((torch.tensor([0, 0], device=dev),), torch.ones(2), accumulate=True)


@case("torch.stack of a device and a cpu tensor")
def _c_stack_mixed(dev):
    return torch.stack([torch.ones(2, device=dev), torch.ones(2)])


# ---------------------------------------------------------------- convolutions, norms, embeddings
@case("Conv2d on device, a batch of cpu images")
def _c_conv_cpu_batch(dev):
    # batch > 1 takes CPU's mkldnn path, not the slow conv2d one (batch 1, tiny image)
    return torch.nn.Conv2d(1, 2, 3).to(dev)(torch.ones(4, 1, 5, 5))


@case("Conv1d on device, one cpu sequence")
def _c_conv1d_cpu_input(dev):
    return torch.nn.Conv1d(1, 2, 3).to(dev)(torch.ones(1, 1, 8))


@case("ConvTranspose2d on device, input on cpu")
def _c_conv_transpose_cpu_input(dev):
    return torch.nn.ConvTranspose2d(1, 2, 3).to(dev)(torch.ones(1, 1, 5, 5))


# A CPU input picks a CPU kernel, which then meets the device weight: which one (mkldnn, slow2d, SlowDilated2d,
# slow3d, the transposed ones) depends on dilation, dtype and dimensions, and each words its refusal its own way.
_CPU_INPUT_CONVS = {
    "conv2d, dilated, float64": (torch.nn.functional.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), torch.float64, 2, True),
    "conv2d, dilated, float32 without mkldnn": (torch.nn.functional.conv2d, (1, 2, 9, 9), (3, 2, 3, 3),
                                                torch.float32, 2, False),
    "conv2d, float64": (torch.nn.functional.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), torch.float64, 1, True),
    "conv1d, dilated, float64": (torch.nn.functional.conv1d, (1, 2, 9), (3, 2, 3), torch.float64, 2, True),
    "conv3d, float32": (torch.nn.functional.conv3d, (1, 2, 5, 5, 5), (3, 2, 3, 3, 3), torch.float32, 1, True),
    "conv3d, dilated, float64": (torch.nn.functional.conv3d, (1, 2, 7, 7, 7), (3, 2, 3, 3, 3), torch.float64, 2,
                                 True),
    "conv_transpose2d, dilated, float64": (torch.nn.functional.conv_transpose2d, (1, 2, 5, 5), (2, 3, 3, 3),
                                           torch.float64, 2, True),
    "conv_transpose3d, float64": (torch.nn.functional.conv_transpose3d, (1, 2, 4, 4, 4), (2, 3, 3, 3, 3),
                                  torch.float64, 1, True),
    "conv_transpose2d, float32, a batch of 16": (torch.nn.functional.conv_transpose2d, (16, 2, 5, 5), (2, 3, 3, 3),
                                                 torch.float32, 1, True),
}


def _cpu_input_conv(what):
    fn, xs, ws, dtype, dilation, mkldnn = _CPU_INPUT_CONVS[what]

    def run(dev):
        with torch.backends.mkldnn.flags(enabled=mkldnn):
            return fn(torch.randn(xs, dtype=dtype), torch.randn(ws, dtype=dtype, device=dev), dilation=dilation)
    return run


for _what in _CPU_INPUT_CONVS:
    case(f"{_what}: a cpu input, the weight on the device")(_cpu_input_conv(_what))


@case("BatchNorm2d on the cpu, input on the device")
def _c_batchnorm2d_cpu(dev):
    return torch.nn.BatchNorm2d(3)(torch.randn(2, 3, 4, 4, device=dev))


@case("Embedding on the cpu, indices on the device")
def _c_embedding_cpu_weight(dev):
    return torch.nn.Embedding(5, 2)(torch.tensor([[1, 2], [3, 4]], device=dev))


@case("cosine_embedding_loss with a cpu target")
def _c_cosine_embedding_cpu_target(dev):
    a = torch.ones(2, 3, device=dev)
    return torch.nn.functional.cosine_embedding_loss(a, a, torch.tensor([1, -1]))


@case("cross_entropy against cpu class probabilities")
def _c_ce_cpu_probs(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.full((2, 3), 1 / 3))


@case("cross_entropy with int32 targets on the device")
def _c_ce_int32_target(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev),
                                             torch.tensor([0, 1], dtype=torch.int32, device=dev))


@case("matmul of int64 tensors on the device")
def _c_matmul_int64(dev):
    a = torch.ones(2, 2, dtype=torch.long, device=dev)
    return (a @ a).cpu()


# ---------------------------------------------------------------- module attributes and parameters
@case("register_buffer(persistent=False) moves but is not saved")
def _c_buffer_not_persistent(dev):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.register_buffer("mask", torch.ones(2), persistent=False)

    m = M().to(dev)
    return [m.mask.device, list(m.state_dict())]


@case("ParameterDict and ModuleDict move with the module")
def _c_param_module_dict(dev):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 1)})
            self.scales = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(1))})

    m = M().to(dev)
    return [m.heads["a"].weight.device, m.scales["a"].device, isinstance(m.scales["a"], torch.nn.Parameter),
            len(list(m.parameters()))]


@case("nn.Parameter(...).to(device) in __init__ is not registered")
def _c_parameter_to_not_registered(dev):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(2)).to(dev)  # a plain tensor now, not a parameter

    m = M()
    return [isinstance(m.w, torch.nn.Parameter), len(list(m.parameters())), m.w.requires_grad, m.w.is_leaf,
            m.w.device]


@case("set .data of a device parameter to a cpu tensor")
def _c_set_data_cpu(dev):
    model = torch.nn.Linear(2, 1).to(dev)
    w = model.weight
    model.weight.data = torch.full((1, 2), 3.0)
    return [model.weight.device, model.weight is w, model.weight.detach().sum().item()]


@case("factories computed on the device: triu_indices, tril_indices, kaiser_window")
def _c_computed_factories(dev):
    base = torch.accelerator.memory_allocated()
    made = [torch.triu_indices(4, 5, 1, device=dev), torch.tril_indices(3, 3, device=dev),
            torch.kaiser_window(6, device=dev), torch.kaiser_window(5, False, 3.0, dtype=torch.float64, device=dev)]
    grown = torch.accelerator.memory_allocated() - base
    return [[(t.device, t.dtype, t.shape) for t in made], [[round(v, 4) for v in t.flatten().tolist()] for t in made],
            grown]


@case("x.data = another device tensor: its values, shape and memory")
def _c_set_data_device_to_device(dev):
    x = torch.ones(256, 256, device=dev)
    base = torch.accelerator.memory_allocated()
    x.data = torch.full((2,), 5.0, device=dev)  # the old 256 KiB are freed: nothing else holds them
    return [x.shape, x.device, x.cpu(), torch.accelerator.memory_allocated() - base]


@case("x.data = a device tensor while a view of x is alive")
def _c_set_data_view_alive(dev):
    x = torch.ones(256, 256, device=dev)
    row = x[0]
    base = torch.accelerator.memory_allocated()
    x.data = torch.empty(0, device=dev)
    held = torch.accelerator.memory_allocated() - base
    del row
    return [held, torch.accelerator.memory_allocated() - base, x.shape]


@case("p.data = p.data.to(:1) moves a parameter to the other GPU", needs_2=True)
def _c_set_data_other_gpu(dev):
    model = torch.nn.Linear(2, 1).to(f"{dev}:0")
    for p in model.parameters():
        p.data = p.data.to(f"{dev}:1")
    return [model.weight.device, model(torch.ones(3, 2, device=f"{dev}:1")).device]


@case("p.data = p.data.to(device) moves a parameter in place")
def _c_set_data_to_device(dev):
    model = torch.nn.Linear(2, 1)
    w = model.weight
    for p in model.parameters():
        p.data = p.data.to(dev)
    out = model(torch.ones(3, 2, device=dev))
    return [model.weight.device, model.weight is w, out.device, out.shape]


@case("assign a cpu gradient to a device parameter")
def _c_assign_cpu_grad(dev):
    w = torch.nn.Parameter(torch.ones(2, device=dev))
    w.grad = torch.zeros(2)
    return w.grad


@case("tensor hook returning a cpu gradient")
def _c_hook_cpu_grad(dev):
    w = torch.ones(2, device=dev, requires_grad=True)

    def to_cpu(g):
        return g.cpu()

    w.register_hook(to_cpu)
    (w * 2).sum().backward()
    return w.grad


# ---------------------------------------------------------------- checkpoints and optimizers
@case("Optimizer.load_state_dict moves state to the parameters' device")
def _c_opt_load_state_dict(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1)
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(2, 3)).sum().backward()
    opt.step()
    saved = opt.state_dict()
    m2 = torch.nn.Linear(3, 1).to(dev)
    opt2 = torch.optim.Adam(m2.parameters())
    opt2.load_state_dict(saved)
    st = opt2.state[m2.weight]
    m2(torch.ones(2, 3, device=dev)).sum().backward()
    opt2.step()
    return [st["exp_avg"].device, st["step"].device, float(st["step"])]


@case("load_state_dict of cpu tensors into a device model keeps it on the device")
def _c_load_state_dict_copy(dev):
    model = torch.nn.Linear(2, 1).to(dev)
    w = model.weight
    model.load_state_dict({"weight": torch.full((1, 2), 2.0), "bias": torch.zeros(1)})
    return [model.weight.device, model.weight is w, model.weight.detach().sum().item()]


@case("load_state_dict(assign=True) of cpu tensors moves parameters to the cpu")
def _c_load_state_dict_assign(dev):
    model = torch.nn.Linear(2, 1).to(dev)
    model.load_state_dict({"weight": torch.full((1, 2), 2.0), "bias": torch.zeros(1)}, assign=True)
    return [model.weight.device, isinstance(model.weight, torch.nn.Parameter), model.weight.requires_grad]


@case("load a cpu checkpoint with map_location to a missing device index")
def _c_load_map_missing_index(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    buf.seek(0)
    return torch.load(buf, map_location=f"{dev}:5")["w"]


@case("Adam over parameters on :0 and :1", needs_2=True)
def _c_adam_two_devices(dev):
    torch.manual_seed(0)
    a = torch.nn.Linear(3, 3).to(f"{dev}:0")
    b = torch.nn.Linear(3, 1).to(f"{dev}:1")
    opt = torch.optim.Adam(list(a.parameters()) + list(b.parameters()))
    b(a(torch.ones(2, 3, device=f"{dev}:0")).to(f"{dev}:1")).sum().backward()
    opt.step()
    return [opt.state[a.weight]["exp_avg"].device, opt.state[b.weight]["exp_avg"].device]


@case("AveragedModel (EMA) on the cpu of a device model")
def _c_averaged_model_cpu(dev):
    from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1).to(dev)
    ema = AveragedModel(model, device="cpu", multi_avg_fn=get_ema_multi_avg_fn(0.9))
    ema.update_parameters(model)
    with torch.no_grad():
        model.weight.add_(1.0)
    ema.update_parameters(model)
    diff = (model.weight.detach().cpu() - ema.module.weight.detach()).abs().max().item()
    return [ema.module.weight.device, int(ema.n_averaged), round(diff, 4)]


# ---------------------------------------------------------------- autograd across devices
@case("backward through .cpu() returns the gradient to the device")
def _c_backward_through_cpu(dev):
    w = torch.ones(3, device=dev, requires_grad=True)
    (w.cpu() * torch.arange(3.0)).sum().backward()
    return [w.grad.device, w.grad.cpu()]


# ---------------------------------------------------------------- legacy spellings
@case("legacy type string moves a cpu tensor to the device")
def _c_legacy_type_string(dev):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = torch.ones(2, dtype=torch.long).type(f"torch.{dev}.FloatTensor")
    return [y.device, y.dtype]


# ---------------------------------------------------------------- data loading, rnn helpers, transformer masks
@case("DataLoader shuffle under set_default_device")
def _c_loader_shuffle_default_device(dev):
    from torch.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(torch.arange(4.0))
    torch.set_default_device(dev)
    try:
        return next(iter(DataLoader(ds, batch_size=2, shuffle=True)))[0].device
    finally:
        torch.set_default_device(None)


@case("DataLoader pin_memory over a dataset already on the device")
def _c_loader_pin_device_dataset(dev):
    from torch.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(torch.arange(4.0, device=dev))
    return next(iter(DataLoader(ds, batch_size=2, pin_memory=True)))[0].device


@case("PackedSequence.to(device) keeps batch_sizes on the cpu")
def _c_packed_to_device(dev):
    from torch.nn.utils.rnn import pack_sequence

    packed = pack_sequence([torch.ones(2, 1), torch.ones(3, 1)], enforce_sorted=False).to(dev)
    return [packed.data.device, packed.batch_sizes.device, packed.sorted_indices.device,
            packed.unsorted_indices.device]


@case("TransformerDecoder with a cpu causal mask from generate_square_subsequent_mask")
def _c_decoder_cpu_causal_mask(dev):
    torch.manual_seed(0)
    layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    dec = torch.nn.TransformerDecoder(layer, 1).to(dev)
    tgt = torch.randn(2, 4, 8, device=dev)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)  # on the cpu
    out = dec(tgt, torch.randn(2, 3, 8, device=dev), tgt_mask=mask)
    return [out.device, out.shape]



@case("bmm of int32 tensors on the device")
def _c_bmm_int32(dev):
    a = torch.ones(2, 2, 2, dtype=torch.int32, device=dev)
    return torch.bmm(a, a).cpu()


@case("nll_loss of a 1-D input with an int32 target on the device")
def _c_nll_1d_int32(dev):
    return torch.nn.functional.nll_loss(torch.zeros(3, device=dev), torch.tensor(1, dtype=torch.int32, device=dev))


@case("cross_entropy, reduction none, with int32 targets on the device")
def _c_ce_none_int32(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev),
                                             torch.tensor([0, 1], dtype=torch.int32, device=dev), reduction="none")


@case("cross_entropy with uint8 targets on the device")
def _c_ce_uint8(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev),
                                             torch.tensor([0, 1], dtype=torch.uint8, device=dev)).device


@case("float matmul of int64 tensors cast on the device")
def _c_matmul_cast(dev):
    a = torch.ones(2, 2, dtype=torch.long, device=dev)
    return (a.float() @ a.float()).cpu()


@case("Conv2d on device, a cpu image with a 1x1 kernel")
def _c_conv_1x1_cpu(dev):
    return torch.nn.Conv2d(1, 2, 1).to(dev)(torch.ones(1, 1, 5, 5))


@case("BatchNorm1d on the cpu, a 2-D input on the device")
def _c_batchnorm1d_2d_cpu(dev):
    return torch.nn.BatchNorm1d(3)(torch.randn(4, 3, device=dev))


@case("BatchNorm2d (eval) on the cpu, input on the device")
def _c_batchnorm2d_eval_cpu(dev):
    return torch.nn.BatchNorm2d(3).eval()(torch.randn(2, 3, 4, 4, device=dev))


@case("torch.stack of a cpu and a device tensor")
def _c_stack_cpu_first(dev):
    return torch.stack([torch.ones(2), torch.ones(2, device=dev)])


@case("torch.where with two 0-dim cpu values")
def _c_where_two_cpu_scalars(dev):
    return torch.where(torch.ones(2, device=dev) > 0, torch.tensor(1.0), torch.tensor(0.0))


@case("write through a device index into a cpu tensor")
def _c_cpu_setitem_device_index(dev):
    x = torch.arange(4.0)
    x[torch.tensor([1, 3], device=dev)] = torch.tensor([7.0, 8.0])
    return x


@case("write device values through cpu indices into a cpu tensor")
def _c_cpu_setitem_device_values(dev):
    x = torch.zeros(4)
    x[torch.tensor([1, 3])] = torch.tensor([7.0, 8.0], device=dev)
    return x


@case("in-place add of a device tensor into a cpu tensor")
def _c_cpu_iadd_device(dev):
    x = torch.zeros(3)
    x += torch.ones(3, device=dev)
    return x


# ---------------------------------------------------------------- everyday bugs, ninth session
@case("DataLoader shuffle with a device Generator")
def _c_loader_device_generator(dev):
    loader = torch.utils.data.DataLoader(list(range(6)), batch_size=3, shuffle=True,
                                         generator=torch.Generator(device=dev))
    return [b.tolist() for b in loader]


@case("random_split under set_default_device")
def _c_random_split_default_device(dev):
    torch.set_default_device(dev)
    try:
        a, b = torch.utils.data.random_split(range(6), [3, 3])
        return [len(a), len(b)]
    finally:
        torch.set_default_device(None)


@case("random_split with a device Generator")
def _c_random_split_device_generator(dev):
    a, b = torch.utils.data.random_split(range(6), [3, 3], generator=torch.Generator(device=dev))
    return [len(a), len(b)]


@case("randperm on the cpu with a device Generator")
def _c_randperm_cpu_device_gen(dev):
    return torch.randperm(5, generator=torch.Generator(device=dev))


@case("randint on the device with a cpu Generator")
def _c_randint_cpu_gen(dev):
    return torch.randint(0, 5, (3,), device=dev, generator=torch.Generator())


@case("multinomial of device probabilities with a cpu Generator")
def _c_multinomial_cpu_gen(dev):
    return torch.multinomial(torch.ones(4, device=dev), 2, generator=torch.Generator())


@case("torch.full with a 0-dim device fill value")
def _c_full_device_value(dev):
    return torch.full((3,), torch.tensor(2.0, device=dev))


@case("torch.arange up to a 0-dim device tensor")
def _c_arange_device_end(dev):
    return torch.arange(torch.tensor(4, device=dev))


@case("torch.zeros of a size read from a device tensor")
def _c_zeros_device_size(dev):
    return torch.zeros(torch.tensor(3, device=dev))


@case("range over a 0-dim device tensor")
def _c_range_device(dev):
    return list(range(torch.tensor(3, device=dev)))


@case("numpy.mean of a list of device losses")
def _c_np_mean_device_losses(dev):
    import numpy as np

    return float(np.mean([torch.tensor(1.0, device=dev), torch.tensor(2.0, device=dev)]))


@case("sum of a list of device losses")
def _c_sum_device_losses(dev):
    return sum([torch.tensor(1.0, device=dev), torch.tensor(2.0, device=dev)])


@case("f-string format of a device loss")
def _c_format_device_loss(dev):
    return f"{torch.tensor(1.23456, device=dev):.3f}"


@case("round() of a device loss")
def _c_round_device_loss(dev):
    return round(torch.tensor(1.23456, device=dev), 2)


@case("math.isnan of a device loss")
def _c_isnan_device(dev):
    import math

    return math.isnan(torch.tensor(float("nan"), device=dev))


@case("numpy() of a device tensor that requires grad")
def _c_numpy_device_requires_grad(dev):
    return torch.ones(2, device=dev, requires_grad=True).numpy()


@case("detach().numpy() of a device tensor")
def _c_detach_numpy_device(dev):
    return torch.ones(2, device=dev).detach().numpy()


@case("autograd.grad with cpu grad_outputs")
def _c_autograd_grad_cpu_outputs(dev):
    x = torch.ones(3, device=dev, requires_grad=True)
    return torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(3))


@case("backward with a cpu gradient")
def _c_backward_cpu_gradient(dev):
    x = torch.ones(3, device=dev, requires_grad=True)
    (x * 2).backward(torch.ones(3))
    return x.grad


@case("custom autograd.Function whose backward returns a cpu gradient")
def _c_function_cpu_grad(dev):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.cpu() * 2

    x = torch.ones(3, device=dev, requires_grad=True)
    Double.apply(x).sum().backward()
    return x.grad


@case("custom autograd.Function whose forward returns a cpu tensor")
def _c_function_cpu_forward(dev):
    class ToHost(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.cpu() * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(3, device=dev, requires_grad=True)
    ToHost.apply(x).sum().backward()
    return x.grad


@case("quantile with a cpu q tensor")
def _c_quantile_cpu_q(dev):
    return torch.quantile(torch.arange(5.0, device=dev), torch.tensor([0.5]))


@case("repeat_interleave with cpu repeats")
def _c_repeat_interleave_cpu(dev):
    return torch.repeat_interleave(torch.arange(3.0, device=dev), torch.tensor([1, 2, 1]))


@case("repeat_interleave with device repeats")
def _c_repeat_interleave_device(dev):
    return torch.repeat_interleave(torch.arange(3.0, device=dev), torch.tensor([1, 2, 1], device=dev)).cpu()


@case("conv2d with a cpu bias")
def _c_conv2d_cpu_bias(dev):
    return torch.nn.functional.conv2d(torch.ones(1, 1, 4, 4, device=dev), torch.ones(2, 1, 3, 3, device=dev),
                                      torch.zeros(2))


@case("group_norm with a cpu weight")
def _c_group_norm_cpu_weight(dev):
    return torch.nn.functional.group_norm(torch.randn(2, 4, 3, device=dev), 2, torch.ones(4), torch.zeros(4))


@case("GroupNorm on the cpu, input on the device")
def _c_groupnorm_module_cpu(dev):
    return torch.nn.GroupNorm(2, 4)(torch.randn(2, 4, 3, device=dev))


@case("instance_norm with cpu running statistics")
def _c_instance_norm_cpu_stats(dev):
    return torch.nn.functional.instance_norm(torch.randn(2, 3, 5, device=dev), torch.zeros(3), torch.ones(3),
                                             use_input_stats=True)


@case("take_along_dim with a cpu index")
def _c_take_along_dim_cpu(dev):
    return torch.take_along_dim(torch.arange(6.0, device=dev).view(2, 3), torch.tensor([[0], [2]]), dim=1)


@case("gather of a cpu tensor with a device index")
def _c_gather_cpu_self(dev):
    return torch.gather(torch.arange(6.0).view(2, 3), 1, torch.tensor([[0], [2]], device=dev))


@case("masked_select with a cpu mask")
def _c_masked_select_cpu_mask(dev):
    return torch.masked_select(torch.arange(4.0, device=dev), torch.tensor([True, False, True, False]))


@case("put_ with a cpu index")
def _c_put_cpu_index(dev):
    return torch.zeros(4, device=dev).put_(torch.tensor([1, 3]), torch.ones(2, device=dev))


@case("bernoulli with cpu probabilities into a device tensor")
def _c_bernoulli_cpu_p(dev):
    return torch.zeros(3, device=dev).bernoulli_(torch.full((3,), 0.5))


@case("kl_div of device log-probabilities and a cpu target")
def _c_kl_div_cpu_target(dev):
    return torch.nn.functional.kl_div(torch.zeros(2, 3, device=dev), torch.full((2, 3), 1 / 3),
                                      reduction="batchmean")


@case("cosine_similarity of a device and a cpu tensor")
def _c_cosine_similarity_mix(dev):
    return torch.nn.functional.cosine_similarity(torch.ones(2, 3, device=dev), torch.ones(2, 3))


@case("testing.assert_close of a device and a cpu tensor")
def _c_assert_close_mix(dev):
    torch.testing.assert_close(torch.ones(2, device=dev), torch.ones(2))


@case("testing.assert_close with check_device=False")
def _c_assert_close_no_device(dev):
    torch.testing.assert_close(torch.ones(2, device=dev), torch.ones(2), check_device=False)
    return True


@case("isclose of a device and a cpu tensor")
def _c_isclose_mix(dev):
    return torch.isclose(torch.ones(2, device=dev), torch.ones(2))


@case("CrossEntropyLoss with cpu class weights, moved with .to(device)")
def _c_ce_module_weights_moved(dev):
    loss = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0])).to(dev)
    return loss(torch.zeros(2, 2, device=dev), torch.tensor([0, 1], device=dev))


@case("CrossEntropyLoss with cpu class weights, not moved")
def _c_ce_module_weights_not_moved(dev):
    loss = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
    return loss(torch.zeros(2, 2, device=dev), torch.tensor([0, 1], device=dev))


@case("Adam with a tensor learning rate over device parameters")
def _c_adam_tensor_lr(dev):
    p = torch.nn.Parameter(torch.ones(2, device=dev))
    opt = torch.optim.Adam([p], lr=torch.tensor(0.1))
    p.sum().backward()
    opt.step()
    return p


@case("share_memory_ of a device tensor")
def _c_share_memory_device(dev):
    x = torch.ones(2, device=dev)
    return [x.share_memory_() is x, x.is_shared(), x.device]


@case("untyped_storage of a device tensor")
def _c_storage_device(dev):
    x = torch.ones(3, device=dev)
    return [x.untyped_storage().device, x.untyped_storage().nbytes()]


@case("fft of a device tensor")
def _c_fft_device(dev):
    return torch.fft.rfft(torch.ones(4, device=dev)).abs().cpu()


@case("linalg.inv of a device matrix")
def _c_inv_device(dev):
    return torch.linalg.inv(torch.eye(2, device=dev) * 2).cpu()


@case("one_hot of device labels without num_classes under sync debug")
def _c_one_hot_sync(dev):
    labels = torch.tensor([0, 2, 1], device=dev)
    with _sync_errors(dev):
        return torch.nn.functional.one_hot(labels).cpu()


@case("boolean mask indexing of a device tensor under sync debug")
def _c_mask_index_sync(dev):
    x = torch.arange(4.0, device=dev)
    with _sync_errors(dev):
        return x[x > 1].cpu()


@case("integer index of a device tensor under sync debug")
def _c_int_index_sync(dev):
    x = torch.arange(4.0, device=dev)
    idx = torch.tensor([3, 1], device=dev)
    with _sync_errors(dev):
        y = x[idx] * 2
    return y.cpu()


@case("non_blocking copy to the cpu under sync debug")
def _c_nonblocking_d2h_sync(dev):
    x = torch.arange(4.0, device=dev)
    with _sync_errors(dev):
        y = x.to("cpu", non_blocking=True)
    _mod(dev).synchronize()
    return y


@case("print of a device tensor under sync debug")
def _c_print_sync(dev):
    x = torch.arange(2.0, device=dev)
    with _sync_errors(dev):
        return repr(x)


@case("torch.where(condition) on the device under sync debug")
def _c_where_one_arg_sync(dev):
    x = torch.arange(4.0, device=dev)
    with _sync_errors(dev):
        return torch.where(x > 1)[0].cpu()


@case("clip_grad_norm_ under sync debug")
def _c_clip_sync(dev):
    model = torch.nn.Linear(3, 2).to(dev)
    model(torch.ones(2, 3, device=dev)).sum().backward()
    with _sync_errors(dev):
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return norm.device


@case("Adam step under sync debug")
def _c_adam_sync(dev):
    model = torch.nn.Linear(3, 2).to(dev)
    opt = torch.optim.Adam(model.parameters())
    model(torch.ones(2, 3, device=dev)).sum().backward()
    with _sync_errors(dev):
        opt.step()
    return model.weight.device


@case("cross_entropy forward and backward under sync debug")
def _c_ce_sync(dev):
    logits = torch.zeros(4, 3, device=dev, requires_grad=True)
    y = torch.tensor([0, 1, 2, 1], device=dev)
    with _sync_errors(dev):
        torch.nn.functional.cross_entropy(logits, y).backward()
    return logits.grad.device


@case("torch.tensor of a list onto the device under sync debug")
def _c_tensor_list_sync(dev):
    with _sync_errors(dev):
        x = torch.tensor([1.0, 2.0], device=dev)
    return x.cpu()


@case("upload of a cpu tensor under sync debug")
def _c_upload_sync(dev):
    x = torch.ones(3)
    with _sync_errors(dev):
        y = x.to(dev)
    return y.cpu()


@case("set_default_device of the type, then set_device(1): torch.tensor and torch.ones", needs_2=True)
def _c_default_device_type_current_1(dev):
    torch.set_default_device(dev)
    _mod(dev).set_device(1)
    try:
        return [torch.tensor([1.0]).device, torch.ones(1).device, torch.as_tensor([1.0]).device]
    finally:
        _mod(dev).set_device(0)
        torch.set_default_device(None)


@case("get_device of a tensor on :1 and on the cpu", needs_2=True)
def _c_get_device(dev):
    return [torch.ones(1, device=f"{dev}:1").get_device(), torch.ones(1).get_device()]


@case("zeros_like and new_zeros of a tensor on :1", needs_2=True)
def _c_like_on_1(dev):
    x = torch.ones(2, device=f"{dev}:1")
    return [torch.zeros_like(x).device, x.new_zeros(3).device, torch.randn_like(x).device]


# ---------------------------------------------------------------- dtypes that do not match, on the device
# The kernels that refuse them differ between the CPU and CUDA, and so do their messages.
@case("Linear (float32) of a float64 input on the device")
def _c_dtype_linear_double(dev):
    return torch.nn.Linear(2, 2).to(dev)(torch.ones(3, 2, dtype=torch.float64, device=dev))


@case("matmul of float32 and float64 on the device")
def _c_dtype_matmul(dev):
    return torch.ones(2, 2, device=dev) @ torch.ones(2, 2, dtype=torch.float64, device=dev)


@case("bmm of float16 and float32 on the device")
def _c_dtype_bmm(dev):
    return torch.bmm(torch.ones(1, 2, 2, dtype=torch.float16, device=dev), torch.ones(1, 2, 2, device=dev))


@case("Conv2d (float32) of a float64 input on the device")
def _c_dtype_conv(dev):
    return torch.nn.Conv2d(1, 1, 3).to(dev)(torch.ones(1, 1, 5, 5, dtype=torch.float64, device=dev))


@case("Embedding of float indices on the device")
def _c_dtype_embedding(dev):
    return torch.nn.Embedding(4, 2).to(dev)(torch.tensor([1.0, 2.0], device=dev))


@case("cross_entropy with float class indices on the device")
def _c_dtype_ce_float_labels(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.tensor([0.0, 2.0], device=dev))


@case("mse_loss of float32 against a float64 target on the device")
def _c_dtype_mse(dev):
    return torch.nn.functional.mse_loss(torch.zeros(3, device=dev), torch.ones(3, dtype=torch.float64, device=dev))


@case("LSTM (float32) of a float64 input on the device")
def _c_dtype_lstm(dev):
    return torch.nn.LSTM(2, 3).to(dev)(torch.ones(4, 1, 2, dtype=torch.float64, device=dev))[0]


@case("BatchNorm1d (float32) of a float16 input on the device")
def _c_dtype_batchnorm_half(dev):
    return torch.nn.BatchNorm1d(3).to(dev)(torch.ones(4, 3, dtype=torch.float16, device=dev))


@case("LayerNorm (float32) of a float16 input on the device")
def _c_dtype_layernorm_half(dev):
    return torch.nn.LayerNorm(3).to(dev)(torch.ones(4, 3, dtype=torch.float16, device=dev))


@case("index_add_ of float64 values into float32 on the device")
def _c_dtype_index_add(dev):
    return torch.zeros(3, device=dev).index_add_(0, torch.tensor([0, 1], device=dev),
                                                 torch.ones(2, dtype=torch.float64, device=dev))


@case("in-place add of float64 into an int64 tensor on the device")
def _c_dtype_inplace_int(dev):
    x = torch.zeros(3, dtype=torch.int64, device=dev)
    x += torch.ones(3, dtype=torch.float64, device=dev)
    return x


@case("a float16 model's weight type against a float32 input (conv) on the device")
def _c_dtype_conv_half_weight(dev):
    return torch.nn.Conv2d(1, 1, 3).to(dev).half()(torch.ones(1, 1, 5, 5, device=dev))


# Kernels the CPU lacks for some dtypes, or has where CUDA lacks them (the simulator runs the CPU's).
@case("cdist of float16 tensors on the device")
def _c_dtype_cdist_half(dev):
    x = torch.ones(3, 2, dtype=torch.float16, device=dev)
    return torch.cdist(x, x)


@case("pdist of float16 rows on the device")
def _c_dtype_pdist_half(dev):
    return torch.nn.functional.pdist(torch.ones(3, 2, dtype=torch.float16, device=dev))


@case("ctc_loss of float16 log-probabilities on the device")
def _c_dtype_ctc_half(dev):
    lp = torch.zeros(5, 2, 4, dtype=torch.float16, device=dev).log_softmax(2)
    return torch.nn.functional.ctc_loss(lp, torch.tensor([[1, 2], [1, 1]], device=dev), (5, 5), (2, 2))


@case("fft of 16 float16 values on the device")
def _c_dtype_fft_half_16(dev):
    return torch.fft.fft(torch.ones(16, dtype=torch.float16, device=dev))


@case("fft of 10 float16 values on the device")
def _c_dtype_fft_half_10(dev):
    return torch.fft.fft(torch.ones(10, dtype=torch.float16, device=dev))


@case("rrelu (training) of float16 on the device")
def _c_dtype_rrelu_half(dev):
    return torch.nn.functional.rrelu(torch.ones(4, dtype=torch.float16, device=dev), training=True)


@case("bilinear interpolate of a uint8 image on the device")
def _c_dtype_interp_uint8(dev):
    return torch.nn.functional.interpolate(torch.zeros(1, 3, 4, 4, dtype=torch.uint8, device=dev), scale_factor=2,
                                           mode="bilinear")


@case("bicubic interpolate of a uint8 image on the device")
def _c_dtype_bicubic_uint8(dev):
    return torch.nn.functional.interpolate(torch.zeros(1, 3, 4, 4, dtype=torch.uint8, device=dev), scale_factor=2,
                                           mode="bicubic")


@case("Conv2d (float32) of a uint8 image on the device")
def _c_dtype_conv_uint8(dev):
    return torch.nn.Conv2d(3, 1, 3).to(dev)(torch.zeros(1, 3, 5, 5, dtype=torch.uint8, device=dev))


@case("conv2d of a uint8 image with uint8 weights on the device")
def _c_dtype_conv_uint8_weights(dev):
    return torch.nn.functional.conv2d(torch.zeros(1, 3, 5, 5, dtype=torch.uint8, device=dev),
                                      torch.ones(1, 3, 3, 3, dtype=torch.uint8, device=dev))


@case("avg_pool2d of a uint8 image on the device")
def _c_dtype_avgpool_uint8(dev):
    return torch.nn.functional.avg_pool2d(torch.zeros(1, 3, 4, 4, dtype=torch.uint8, device=dev), 2)


# ---------------------------------------------------------------- sparse tensors (graph code: an adjacency matrix)
def _adjacency(device=None):
    """A 3-node graph's normalised adjacency matrix, sparse COO."""
    i = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    return torch.sparse_coo_tensor(i, torch.full((4,), 0.5), (3, 3), device=device)


@case("sparse.mm of a cpu adjacency matrix and device features")
def _c_sparse_mm_cpu_adj(dev):
    return torch.sparse.mm(_adjacency(), torch.ones(3, 2, device=dev))


@case("cpu sparse adjacency @ device features")
def _c_sparse_matmul_cpu_adj(dev):
    return _adjacency() @ torch.ones(3, 2, device=dev)


@case("device sparse adjacency @ cpu features")
def _c_sparse_matmul_cpu_x(dev):
    return _adjacency().to(dev) @ torch.ones(3, 2)


@case("sparse.mm on the device: adjacency moved with .to(device)")
def _c_sparse_mm_moved(dev):
    a = _adjacency().to(dev)
    out = torch.sparse.mm(a, torch.ones(3, 2, device=dev))
    return [a.device, a.layout, a.is_sparse, out, out.cpu()]


@case("sparse_coo_tensor(..., device=) and to_dense")
def _c_sparse_made_on_device(dev):
    a = _adjacency(dev)
    return [a.device, a._indices().device, a._values().device, a.to_dense().cpu()]


@case("sparse_coo_tensor of cpu indices and device values")
def _c_sparse_mixed_parts(dev):
    i = torch.tensor([[0, 1], [1, 0]])
    return torch.sparse_coo_tensor(i, torch.ones(2, device=dev), (2, 2))


@case("to_sparse of a device tensor: coalesce, indices, values, sum")
def _c_to_sparse_on_device(dev):
    s = torch.eye(3, device=dev).to_sparse().coalesce()
    return [s.indices().device, s.values().device, s.indices().cpu(), torch.sparse.sum(s).item()]


@case("device sparse + cpu sparse")
def _c_sparse_add_mixed(dev):
    return _adjacency().to(dev) + _adjacency()


@case("sparse adjacency on :1 @ features on :0", needs_2=True)
def _c_sparse_on_1(dev):
    return _adjacency().to(f"{dev}:1") @ torch.ones(3, 2, device=f"{dev}:0")


@case("to_sparse_csr of a device tensor @ device features")
def _c_sparse_csr(dev):
    a = _adjacency().to_dense().to(dev).to_sparse_csr()
    out = a @ torch.ones(3, 2, device=dev)
    return [a.layout, a.crow_indices().device, out.cpu()]


@case("backward through sparse.mm with a device adjacency")
def _c_sparse_backward(dev):
    x = torch.ones(3, 2, device=dev, requires_grad=True)
    torch.sparse.mm(_adjacency().to(dev), x).sum().backward()
    return [x.grad.device, x.grad.cpu()]


@case("memory_allocated for a device sparse tensor")
def _c_sparse_memory(dev):
    mod = getattr(torch, dev)
    mod.synchronize()
    before = mod.memory_allocated()
    a = _adjacency().to(dev)
    return [mod.memory_allocated() - before, a._nnz()]


@case("a device parameter's .data set to a cpu tensor, then backward")
def _c_set_data_cpu_then_backward(dev):
    model = torch.nn.Linear(2, 1).to(dev)
    model.weight.data = torch.ones(1, 2)
    model(torch.ones(4, 2)).sum().backward()
    return [model.weight.device, model.weight.grad.device, model.bias.grad.device]


def _fresh_process(dev: str, body: str):
    """Run `body` (statements using `dev`) in a new process with the device set up as here, and report each
    step it reached: a device-side assert poisons a CUDA context for good, so it cannot run in this one. The
    body appends to `steps`; an exception is recorded with its type and first line, and ends the body. On the
    simulator the same program runs in a fork of this process (reset_after_fork): 0.05 s where a new Python
    takes 2 s."""
    setup = "import grader.simulated as gs\nif not gs.is_installed(): gs.install(count=2)\n" if dev == "sim" else ""
    code = (f"import sys; sys.path.insert(0, {_ROOT!r})\n"
            "import json, torch\n" + setup +
            f"dev = {dev!r}\nsteps = []\n"
            "try:\n" + "".join(f"    {line}\n" for line in body.strip().splitlines()) +
            "except Exception as e:\n"
            "    steps.append([type(e).__name__, str(e).strip().splitlines()[0]])\n"
            "print(json.dumps(steps))\n")
    if dev == "sim" and hasattr(os, "fork"):
        out, err = _run_in_fork(code), ""
    else:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        out, err = r.stdout, r.stderr
    lines = out.strip().splitlines()
    if not lines:
        raise RuntimeError(f"the process ended without a result: {err.strip().splitlines()[-1:]}")
    return json.loads(lines[-1])


def _run_in_fork(code: str) -> str:
    """What the Python program `code` prints, run in a fork of this process that uses its simulator."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            sys.stdout = os.fdopen(w, "w")  # not fd 1, which a test runner may have captured
            from grader.simulated import reset_after_fork

            reset_after_fork()
            torch.set_num_threads(1)  # the parent's OpenMP threads are not in the fork: a parallel kernel would hang
            exec(code, {"__name__": "__main__"})
            sys.stdout.flush()
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


@case("cross_entropy with a label out of range: when and how it fails")
def _c_ce_label_out_of_range(dev):
    return _fresh_process(dev, """
logits = torch.zeros(2, 3, device=dev)
loss = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 5], device=dev))
steps.append("loss computed")
steps.append(loss.item())
""")


@case("embedding with an index out of range: when and how it fails")
def _c_embedding_out_of_range(dev):
    return _fresh_process(dev, """
emb = torch.nn.Embedding(4, 2).to(dev)
out = emb(torch.tensor([1, 9], device=dev))
steps.append("looked up")
steps.append(out.sum().item())
""")


@case("indexing with a device index out of range: when and how it fails")
def _c_index_out_of_range(dev):
    return _fresh_process(dev, """
x = torch.arange(4.0, device=dev)
y = x[torch.tensor([1, 7], device=dev)]
steps.append("indexed")
steps.append(y.sum().item())
""")


@case("after a device-side assert, the next operation on the device")
def _c_after_device_assert(dev):
    return _fresh_process(dev, """
logits = torch.zeros(2, 3, device=dev)
loss = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 5], device=dev))
try:
    loss.item()
except Exception as e:
    steps.append(type(e).__name__)
steps.append((torch.ones(2, device=dev) + 1).sum().item())
""")


@case("device-side assert: every line of the error at the next wait")
def _c_device_assert_whole_message(dev):
    return _fresh_process(dev, """
loss = torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.tensor([0, 5], device=dev))
try:
    loss.item()
except Exception as e:
    steps.append([type(e).__module__, type(e).__name__, *str(e).strip().splitlines()])
""")


# Kernels that check their data: on the CPU the operation raises; on CUDA it may assert on the device (the
# error comes at the next wait), check on the host (it raises at once), or not check at all. Each statement
# makes `y`; the case then records whether the operation returned, and what the next wait gives.
_DATA_CHECKS = {
    "gather with an index out of range":
        "y = torch.gather(torch.zeros(2, 3, device=dev), 1, torch.tensor([[0], [5]], device=dev))",
    "scatter_ with an index out of range":
        "y = torch.zeros(2, 3, device=dev).scatter_(1, torch.tensor([[0], [5]], device=dev), 1.0)",
    "index_select with an index out of range":
        "y = torch.zeros(4, device=dev).index_select(0, torch.tensor([1, 9], device=dev))",
    "index_add_ with an index out of range":
        "y = torch.zeros(4, device=dev).index_add_(0, torch.tensor([1, 9], device=dev), torch.ones(2, device=dev))",
    "take with an index out of range":
        "y = torch.take(torch.zeros(4, device=dev), torch.tensor([1, 9], device=dev))",
    "assigning through an index out of range":
        "y = torch.zeros(4, device=dev)\ny[torch.tensor([1, 9], device=dev)] = 1.0",
    "nll_loss with a label out of range":
        "y = torch.nn.functional.nll_loss(torch.zeros(2, 3, device=dev), torch.tensor([0, 3], device=dev))",
    "cross_entropy with a label of -1 (not the ignore_index)":
        "y = torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.tensor([0, -1], device=dev))",
    "embedding_bag with an index out of range":
        "y = torch.nn.functional.embedding_bag(torch.tensor([[1, 9]], device=dev), torch.zeros(4, 2, device=dev))",
    "binary_cross_entropy of an input above 1":
        "y = torch.nn.functional.binary_cross_entropy(torch.tensor([0.5, 1.5], device=dev), torch.ones(2, device=dev))",
    "multinomial of a negative probability":
        "y = torch.multinomial(torch.tensor([0.5, -0.1, 0.6], device=dev), 1)",
    "multinomial of a row of zeros":
        "y = torch.multinomial(torch.zeros(2, 3, device=dev), 1)",
    "bincount of a negative value":
        "y = torch.bincount(torch.tensor([1, -2], device=dev))",
}


def _data_check_case(statement: str):
    def run(dev):
        return _fresh_process(dev, statement + """
steps.append("returned")
steps.append(float(y.float().sum().item()))
""")
    return run


for _name, _statement in _DATA_CHECKS.items():
    case(f"{_name}: when and how it fails")(_data_check_case(_statement))


@case("cross_entropy with a label out of range, on the cpu")
def _c_ce_label_out_of_range_cpu(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 5]))


# ---------------------------------------------------------------- eleventh session: more bugs seen in real code
class _MakesZeros(torch.nn.Module):
    def forward(self, x):
        return x + torch.zeros(x.shape, device=x.device)  # tracing records the device of the example input


@case("jit.trace on the cpu, then run on the device: the traced factory stays on the cpu")
def _c_jit_trace_cpu_then_device(dev):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(_MakesZeros(), torch.ones(2, 3))
    try:
        return traced(torch.ones(2, 3, device=dev))
    except RuntimeError as e:  # the TorchScript traceback before the error names files of this machine
        raise RuntimeError(str(e).strip().splitlines()[-1]) from None


@case("jit.script of a Linear, moved to the device")
def _c_jit_script_to_device(dev):
    scripted = torch.jit.script(torch.nn.Linear(3, 2)).to(dev)
    return scripted(torch.ones(4, 3, device=dev))


@case("Categorical.log_prob of cpu actions for device logits")
def _c_categorical_log_prob_cpu(dev):
    dist = torch.distributions.Categorical(logits=torch.zeros(4, 3, device=dev))
    return dist.log_prob(torch.tensor([0, 1, 2, 1]))


@case("Normal.log_prob of a cpu value for a device loc and scale")
def _c_normal_log_prob_cpu(dev):
    dist = torch.distributions.Normal(torch.zeros(3, device=dev), torch.ones(3, device=dev))
    return dist.log_prob(torch.ones(3))


@case("masked_fill of a cpu tensor with a device mask")
def _c_masked_fill_cpu_self(dev):
    return torch.zeros(4).masked_fill(torch.tensor([True, False, True, False], device=dev), 1.0)


@case("torch.where with a device condition and cpu values")
def _c_where_device_cond_cpu_values(dev):
    return torch.where(torch.tensor([True, False], device=dev), torch.ones(2), torch.zeros(2))


@case("matmul cpu @ device")
def _c_matmul_cpu_device(dev):
    return torch.ones(2, 3) @ torch.ones(3, 4, device=dev)


@case("bmm of a device and a cpu batch")
def _c_bmm_device_cpu(dev):
    return torch.bmm(torch.ones(2, 2, 3, device=dev), torch.ones(2, 3, 4))


@case("assign a device row into a cpu buffer")
def _c_assign_device_row_into_cpu(dev):
    buf = torch.zeros(3, 4)
    buf[1] = torch.arange(4.0, device=dev)
    return buf


@case("clip_grad_value_ of device gradients")
def _c_clip_grad_value(dev):
    lin = torch.nn.Linear(3, 2).to(dev)
    (lin(torch.full((4, 3), 10.0, device=dev)).sum() * 100).backward()
    torch.nn.utils.clip_grad_value_(lin.parameters(), 0.5)
    return [lin.weight.grad.abs().max().cpu(), lin.weight.grad.device]


@case("weight_norm parametrization moves with the module")
def _c_weight_norm_moves(dev):
    lin = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2)).to(dev)
    out = lin(torch.ones(4, 3, device=dev))
    return [out.device, lin.parametrizations.weight.original0.device, lin.weight.device]


@case("torch.as_tensor of a numpy array with device=")
def _c_as_tensor_numpy_device(dev):
    import numpy as np

    return torch.as_tensor(np.arange(4, dtype=np.float32), device=dev)


@case("F.normalize of a device batch by a cpu mean and std")
def _c_normalize_cpu_stats(dev):
    images = torch.ones(2, 3, 4, 4, device=dev)
    mean, std = torch.tensor([0.5, 0.5, 0.5]).view(3, 1, 1), torch.tensor([0.2, 0.2, 0.2]).view(3, 1, 1)
    return (images - mean) / std


@case("accuracy: argmax of device logits compared with cpu labels")
def _c_accuracy_cpu_labels(dev):
    logits = torch.eye(3, device=dev)
    return (logits.argmax(dim=1) == torch.tensor([0, 1, 1])).float().mean()


@case("a head replaced after model.to(device)")
def _c_head_replaced_after_to(dev):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).to(dev)
    model[2] = torch.nn.Linear(4, 5)
    return model(torch.ones(1, 3, device=dev))


@case("a buffer registered as None, set to a cpu tensor in forward")
def _c_buffer_none_then_cpu(dev):
    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", None)

        def forward(self, x):
            if self.mask is None:
                self.mask = torch.ones(x.shape[-1])
            return x * self.mask

    return Cache().to(dev)(torch.ones(2, 3, device=dev))


@case("scatter_reduce of a device tensor with a cpu index")
def _c_scatter_reduce_cpu_index(dev):
    return torch.zeros(3, device=dev).scatter_reduce(0, torch.tensor([0, 1, 1]), torch.ones(3, device=dev), "sum")


@case("torch.autocast with device_type='cpu' around device work")
def _c_autocast_cpu_type_on_device(dev):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = torch.ones(2, 3, device=dev) @ torch.ones(3, 2, device=dev)
    return out



# ---------------------------------------------------------------- twelfth session: CPU tensors and everyday code
# ---------------------------------------------------------------- 0-dim tensors, scalars and dtype promotion
@case("clamp of a cpu tensor with a 0-dim device bound")
def _n_clamp_cpu_self_device_bound(dev):
    return torch.arange(4.0).clamp(min=torch.tensor(1.5, device=dev))


@case("addcdiv with two 0-dim cpu tensors")
def _n_addcdiv_cpu_scalars(dev):
    x = torch.ones(3, device=dev)
    return torch.addcdiv(x, torch.tensor(3.0), torch.tensor(2.0), value=0.5).cpu()


@case("pow of a 0-dim cpu base to a device exponent")
def _n_pow_cpu_base(dev):
    out = torch.pow(torch.tensor(2.0), torch.arange(3.0, device=dev))
    return [out.device, out.cpu()]


@case("float16 device tensor plus a 0-dim cpu float64 tensor: result dtype")
def _n_half_plus_cpu_double_scalar(dev):
    out = torch.ones(2, device=dev, dtype=torch.float16) + torch.tensor(0.25, dtype=torch.float64)
    return [out.dtype, out.device, out.cpu()]


@case("uint8 device tensor plus a 0-dim cpu int64 of 300")
def _n_uint8_plus_300(dev):
    out = torch.tensor([1, 250], dtype=torch.uint8, device=dev) + torch.tensor(300)
    return [out.dtype, out.cpu()]


@case("int64 device tensor divided by a 0-dim cpu int64")
def _n_int_div_cpu_scalar(dev):
    x = torch.tensor([3, 4, 7], device=dev)
    d = torch.tensor(2)
    return [(x / d).dtype, (x / d).cpu(), (x // d).cpu(), torch.div(x, d, rounding_mode="floor").dtype]


@case("0-dim tensor on :1 times a tensor on :0", needs_2=True)
def _n_scalar_on_1_times_0(dev):
    return torch.ones(3, device=f"{dev}:0") * torch.tensor(2.0, device=f"{dev}:1")


@case("masked_fill of a :0 tensor with a 0-dim value on :1", needs_2=True)
def _n_masked_fill_value_on_1(dev):
    x = torch.zeros(3, device=f"{dev}:0")
    mask = torch.tensor([True, False, True], device=f"{dev}:0")
    return x.masked_fill(mask, torch.tensor(5.0, device=f"{dev}:1")).cpu()


@case("index_fill_ with a 0-dim cpu value tensor")
def _n_index_fill_cpu_value(dev):
    x = torch.zeros(4, device=dev)
    return x.index_fill_(0, torch.tensor([1, 3], device=dev), torch.tensor(7.0)).cpu()


@case("torch.cat of a device tensor and an empty 1-D cpu tensor")
def _n_cat_empty_cpu(dev):
    out = torch.cat([torch.ones(2, 2, device=dev), torch.tensor([])])
    return [out.shape, out.device]


@case("torch.add of cpu tensors into a device out=")
def _n_add_cpu_into_device_out(dev):
    out = torch.empty(3, device=dev)
    torch.add(torch.ones(3), torch.ones(3), out=out)
    return out.cpu()


@case("torch.dot of a device and a cpu vector")
def _n_dot_mixed(dev):
    return torch.dot(torch.ones(3, device=dev), torch.ones(3))


@case("block_diag of a device and a cpu matrix")
def _n_block_diag_mixed(dev):
    return torch.block_diag(torch.ones(2, 2, device=dev), torch.ones(1, 1))


@case("meshgrid of a device and a cpu arange")
def _n_meshgrid_mixed(dev):
    ys, xs = torch.meshgrid(torch.arange(2, device=dev), torch.arange(3), indexing="ij")
    return [ys.device, xs.device]


@case("take_along_dim of a cpu tensor with device indices")
def _n_take_along_dim_cpu_self(dev):
    idx = torch.tensor([[1], [0]], device=dev)
    return torch.take_along_dim(torch.arange(6.0).view(2, 3), idx, dim=1)


@case("index_add_ of cpu values into a device tensor")
def _n_index_add_cpu_source(dev):
    x = torch.zeros(3, device=dev)
    return x.index_add_(0, torch.tensor([0, 2], device=dev), torch.ones(2)).cpu()


@case("index_put_ of a device tensor with cpu indices and device values")
def _n_index_put_cpu_indices(dev):
    x = torch.zeros(2, 3, device=dev)
    rows, cols = torch.tensor([0, 1, 1]), torch.tensor([2, 0, 0])
    x.index_put_((rows, cols), torch.ones(3, device=dev), accumulate=True)
    return x.cpu()


# ---------------------------------------------------------------- sizes, bounds and arguments from device tensors
@case("narrow with a 0-dim device start")
def _n_narrow_device_start(dev):
    x = torch.arange(6.0, device=dev)
    return x.narrow(0, torch.tensor(2, device=dev), 3).cpu()


@case("slice with bounds from a 1-element device tensor")
def _n_slice_device_bounds(dev):
    x = torch.arange(6.0, device=dev)
    i = torch.tensor([2], device=dev)
    return x[i:i + 2].cpu()


@case("interpolate to a size read from a device tensor")
def _n_interpolate_device_size(dev):
    size = torch.tensor([4, 6], device=dev)
    out = torch.nn.functional.interpolate(torch.ones(1, 1, 2, 3, device=dev), size=(size[0], size[1]), mode="nearest")
    return [out.shape, out.device]


@case("dropout with p as a 0-dim device tensor")
def _n_dropout_tensor_p(dev):
    return torch.nn.functional.dropout(torch.ones(4, device=dev), p=torch.tensor(0.0, device=dev), training=True).cpu()


@case("apply_ of a device tensor")
def _n_apply_device(dev):
    return torch.arange(3.0, device=dev).apply_(lambda v: v * 2)


# ---------------------------------------------------------------- python and numpy interop
@case("python max() over a list of device losses")
def _n_python_max_device_losses(dev):
    losses = [torch.tensor(v, device=dev) for v in (0.5, 2.0, 1.0)]
    best = max(losses)
    return [best.device, best.item(), sorted(losses)[0].item()]


@case("device equality with strings and with an index-less device")
def _n_device_equality(dev):
    x = torch.ones(1, device=dev)
    return [x.device == torch.device(dev), x.device == torch.device(f"{dev}:0"), x.device == f"{dev}:0",
            x.device.type == dev, x.device.index, torch.device(dev).index]


# ---------------------------------------------------------------- factories
@case("factories with device= taken from a tensor on :1", needs_2=True)
def _n_factories_from_tensor_on_1(dev):
    x = torch.ones(2, device=f"{dev}:1")
    return [torch.arange(3, device=x.device).device, torch.tensor([1.0], device=x.device).device,
            torch.randn(2, device=x.device).device, torch.full((2,), 3.0, device=x.device).device]


# ---------------------------------------------------------------- views, strides and in-place
@case("copy_ of a cpu tensor into a transposed view of a device tensor")
def _n_copy_into_transposed_view(dev):
    x = torch.zeros(2, 3, device=dev)
    x.t().copy_(torch.arange(6.0).view(3, 2))
    return x.cpu()


@case("assign a cpu patch into a slice of a device image")
def _n_assign_cpu_patch(dev):
    img = torch.zeros(1, 4, 4, device=dev)
    img[:, 1:3, 1:3] = torch.ones(1, 2, 2)
    return [img.device, img.sum().item()]


# ---------------------------------------------------------------- modules, hooks, parametrizations
@case("forward hook returning a cpu output")
def _n_forward_hook_cpu_output(dev):
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1)).to(dev)
    model[0].register_forward_hook(lambda m, inp, out: out.detach().cpu())
    return model(torch.ones(2, 3, device=dev))


@case("parametrization with a plain cpu tensor attribute after module.to(device)")
def _n_parametrization_cpu_attribute(dev):
    class Masked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mask = torch.tensor([[1.0, 0.0, 1.0]])

        def forward(self, w):
            return w * self.mask

    lin = torch.nn.Linear(3, 1)
    torch.nn.utils.parametrize.register_parametrization(lin, "weight", Masked())
    lin = lin.to(dev)
    return lin(torch.ones(2, 3, device=dev))


@case("vector_to_parameters of a cpu vector into device parameters")
def _n_vector_to_parameters_cpu(dev):
    model = torch.nn.Linear(2, 1).to(dev)
    torch.nn.utils.vector_to_parameters(torch.arange(3.0), model.parameters())
    return [model.weight.device, model.bias.device]


@case("tied embedding and output weights stay tied after model.to(device)")
def _n_tied_weights(dev):
    emb = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    model = torch.nn.ModuleDict({"emb": emb, "head": head}).to(dev)
    return [model["head"].weight is model["emb"].weight, model["head"].weight.device,
            len(list(model.parameters()))]


@case("a meta-device model .to(device)")
def _n_meta_model_to(dev):
    with torch.device("meta"):
        model = torch.nn.Linear(2, 2)
    return model.to(dev).weight.device


@case("to_empty(device=) of a meta-device model, then reset_parameters")
def _n_meta_to_empty(dev):
    with torch.device("meta"):
        model = torch.nn.Linear(2, 2)
    model.to_empty(device=dev)
    model.reset_parameters()
    return [model.weight.device, model.bias.device, model(torch.ones(1, 2, device=dev)).shape]


@case("module.to(device, float64) keeps integer buffers integer")
def _n_to_device_and_dtype(dev):
    bn = torch.nn.BatchNorm1d(2).to(dev, torch.float64)
    return [bn.weight.dtype, bn.running_mean.dtype, bn.num_batches_tracked.dtype, bn.num_batches_tracked.device]


@case("full_backward_hook on a device module: gradient devices")
def _n_full_backward_hook(dev):
    seen = []
    lin = torch.nn.Linear(3, 2).to(dev)
    lin.register_full_backward_hook(lambda m, gin, gout: seen.extend([gin[0].device, gout[0].device]))
    x = torch.ones(1, 3, device=dev, requires_grad=True)
    lin(x).sum().backward()
    return seen


# ---------------------------------------------------------------- training steps, initialisation, mixed precision
@case("SGD with momentum over a cpu and a device parameter")
def _n_sgd_cpu_and_device(dev):
    a = torch.nn.Parameter(torch.ones(2))
    b = torch.nn.Parameter(torch.ones(2, device=dev))
    opt = torch.optim.SGD([a, b], lr=0.5, momentum=0.9)
    (a.sum() + b.sum().cpu()).backward()
    opt.step()
    return [a.detach(), b.detach().cpu(), opt.state[b]["momentum_buffer"].device]


@case("GradScaler of the device scaling a cpu loss")
def _n_grad_scaler_cpu_loss(dev):
    scaler = torch.amp.GradScaler(dev, init_scale=4.0)
    scaled = scaler.scale(torch.tensor(1.5))
    return [scaled.device, scaled.item()]


@case("autocast bfloat16 Linear of a float64 input")
def _n_autocast_linear_float64(dev):
    lin = torch.nn.Linear(2, 2).to(dev)
    with torch.autocast(device_type=dev, dtype=torch.bfloat16):
        out = lin(torch.ones(3, 2, device=dev, dtype=torch.float64))
        added = out + torch.ones(3, 2, device=dev)
    return [out.dtype, added.dtype]


@case("autocast on the device leaves a cpu matmul in float32")
def _n_autocast_device_cpu_matmul(dev):
    with torch.autocast(device_type=dev, dtype=torch.bfloat16):
        cpu_out = torch.ones(2, 2) @ torch.ones(2, 2)
        dev_out = torch.ones(2, 2, device=dev) @ torch.ones(2, 2, device=dev)
    return [cpu_out.dtype, dev_out.dtype]


# ---------------------------------------------------------------- RNN cells
@case("GRUCell on the device, hidden state on the cpu")
def _n_grucell_cpu_hidden(dev):
    cell = torch.nn.GRUCell(3, 2).to(dev)
    return cell(torch.ones(4, 3, device=dev), torch.zeros(4, 2))


@case("LSTM on :1, initial state on :0", needs_2=True)
def _n_lstm_on_1_state_on_0(dev):
    lstm = torch.nn.LSTM(3, 2).to(f"{dev}:1")
    h = torch.zeros(1, 2, 2, device=f"{dev}:0")
    return lstm(torch.ones(4, 2, 3, device=f"{dev}:1"), (h, h))


# ---------------------------------------------------------------- losses and embeddings
@case("cross_entropy of 4-D segmentation logits with a cpu target")
def _n_ce_segmentation_cpu_target(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(1, 3, 2, 2, device=dev), torch.zeros(1, 2, 2, dtype=torch.long))


@case("l1_loss against a 0-dim cpu target")
def _n_l1_loss_cpu_scalar_target(dev):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.nn.functional.l1_loss(torch.arange(3.0, device=dev), torch.tensor(1.0))
    return [out.device, out.item()]


@case("EmbeddingBag (sum) with cpu per_sample_weights")
def _n_embedding_bag_cpu_weights(dev):
    bag = torch.nn.EmbeddingBag(5, 2, mode="sum").to(dev)
    return bag(torch.tensor([[1, 2]], device=dev), per_sample_weights=torch.tensor([[0.5, 2.0]]))


@case("Embedding(sparse=True) on the device: gradient layout and device")
def _n_embedding_sparse_grad(dev):
    emb = torch.nn.Embedding(5, 2, sparse=True).to(dev)
    emb(torch.tensor([1, 1, 3], device=dev)).sum().backward()
    g = emb.weight.grad
    return [g.layout, g.device, g.coalesce().values().sum().item()]


# ---------------------------------------------------------------- data pipeline
@case("default_collate of dicts of device tensors and python floats")
def _n_default_collate_dicts(dev):
    from torch.utils.data import default_collate

    batch = default_collate([{"x": torch.ones(2, device=dev), "w": 0.5}, {"x": torch.zeros(2, device=dev), "w": 1.5}])
    return [batch["x"].device, batch["x"].shape, batch["w"].device, batch["w"].dtype]


@case("WeightedRandomSampler over device weights")
def _n_weighted_sampler_device(dev):
    from torch.utils.data import WeightedRandomSampler

    torch.manual_seed(0)
    sampler = WeightedRandomSampler(torch.tensor([0.0, 1.0, 0.0], device=dev), num_samples=3)
    return list(sampler)


@case("SubsetRandomSampler over device indices")
def _n_subset_sampler_device(dev):
    from torch.utils.data import SubsetRandomSampler

    torch.manual_seed(0)
    items = list(SubsetRandomSampler(torch.tensor([4, 4, 4], device=dev)))
    return [type(items[0]).__name__, items[0].device, [int(i) for i in items]]


# ---------------------------------------------------------------- checkpoints
@case("torch.load with dict map_location from :1 to :0", needs_2=True)
def _n_load_map_1_to_0(dev):
    buf = io.BytesIO()
    torch.save({"a": torch.ones(2, device=f"{dev}:1"), "b": torch.ones(2)}, buf)
    buf.seek(0)
    sd = torch.load(buf, map_location={f"{dev}:1": f"{dev}:0"})
    return [sd["a"].device, sd["b"].device]


@case("torch.save of a tensor on :1 loads back on :1", needs_2=True)
def _n_save_on_1_load(dev):
    buf = io.BytesIO()
    torch.save(torch.arange(3.0, device=f"{dev}:1"), buf)
    buf.seek(0)
    return torch.load(buf).device


@case("load_state_dict of a device checkpoint into a cpu model")
def _n_load_device_sd_into_cpu(dev):
    src = torch.nn.Linear(2, 1).to(dev)
    dst = torch.nn.Linear(2, 1)
    dst.load_state_dict(src.state_dict())
    return [dst.weight.device, torch.equal(dst.weight, src.weight.cpu())]


@case("torch.save of a slice of a device tensor keeps the whole storage")
def _n_save_slice_storage(dev):
    buf = io.BytesIO()
    torch.save(torch.arange(100.0, device=dev)[3:5], buf)
    buf.seek(0)
    y = torch.load(buf)
    return [y.device, y.untyped_storage().nbytes(), y.storage_offset(), y.cpu()]


# ---------------------------------------------------------------- random numbers and distributions
@case("a Generator on :1 for randn on :0", needs_2=True)
def _n_generator_on_1(dev):
    g = torch.Generator(device=f"{dev}:1").manual_seed(0)
    return torch.randn(2, device=f"{dev}:0", generator=g)


@case("device Generator get_state: device, dtype and restore")
def _n_generator_get_state(dev):
    g = torch.Generator(device=dev).manual_seed(3)
    state = g.get_state()
    a = torch.rand(2, device=dev, generator=g)
    g.set_state(state)
    b = torch.rand(2, device=dev, generator=g)
    return [state.device, state.dtype, torch.equal(a, b), g.device]


@case("torch.random.fork_rng restores the device generator")
def _n_fork_rng(dev):
    torch.manual_seed(0)
    with torch.random.fork_rng(device_type=dev):
        torch.rand(3, device=dev)
    a = torch.rand(3, device=dev)
    torch.manual_seed(0)
    b = torch.rand(3, device=dev)
    return torch.equal(a, b)


@case("distributions.Uniform of a 0-dim cpu low and a device high")
def _n_uniform_cpu_low(dev):
    torch.manual_seed(0)
    d = torch.distributions.Uniform(torch.tensor(0.0), torch.ones(3, device=dev), validate_args=False)
    return d.sample().device


# ---------------------------------------------------------------- torch.func
@case("torch.func.grad of a function closing over a cpu tensor")
def _n_func_grad_cpu_closure(dev):
    w = torch.ones(3)
    return torch.func.grad(lambda x: (x * w).sum())(torch.ones(3, device=dev))


@case("vmap of a function mixing a device input and a cpu tensor")
def _n_vmap_cpu_closure(dev):
    w = torch.arange(3.0)
    return torch.vmap(lambda v: v @ w)(torch.ones(2, 3, device=dev))


@case("torch.func.stack_module_state of device models")
def _n_stack_module_state(dev):
    models = [torch.nn.Linear(2, 1).to(dev) for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    return [params["weight"].device, params["weight"].shape, params["weight"].requires_grad]


# ---------------------------------------------------------------- two devices
@case("cross_entropy with logits on :1 and targets on :0", needs_2=True)
def _n_ce_1_and_0(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=f"{dev}:1"), torch.tensor([0, 1], device=f"{dev}:0"))



# Two GPUs, one model: the usual bugs of code that moved a model to one GPU and its data to the other (and the
# calls CUDA runs all the same), checked by the mix sweep operator by operator and here as code is written.
@case("nn.Conv2d on :0 given a batch on :1", needs_2=True)
def _n_conv_on_0_batch_on_1(dev):
    torch.manual_seed(0)
    return torch.nn.Conv2d(2, 3, 3).to(f"{dev}:0")(torch.randn(1, 2, 6, 6, device=f"{dev}:1"))


@case("nn.ConvTranspose1d on :1 given a batch on :0", needs_2=True)
def _n_convt_on_1_batch_on_0(dev):
    torch.manual_seed(0)
    return torch.nn.ConvTranspose1d(2, 3, 3).to(f"{dev}:1")(torch.randn(1, 2, 6, device=f"{dev}:0"))


@case("conv2d with its bias on :1", needs_2=True)
def _n_conv_bias_on_1(dev):
    x, w = torch.ones(1, 1, 4, 4, device=f"{dev}:0"), torch.ones(2, 1, 3, 3, device=f"{dev}:0")
    return torch.nn.functional.conv2d(x, w, torch.zeros(2, device=f"{dev}:1"))


@case("index a :0 tensor with :1 indices", needs_2=True)
def _n_index_other_gpu(dev):
    return torch.arange(6.0, device=f"{dev}:0")[torch.tensor([1, 2], device=f"{dev}:1")]


@case("index a :0 tensor with a :1 boolean mask", needs_2=True)
def _n_mask_other_gpu(dev):
    x = torch.arange(6.0, device=f"{dev}:0")
    return x[torch.tensor([True, False] * 3, device=f"{dev}:1")]


@case("assign into a :0 tensor at :1 indices", needs_2=True)
def _n_setitem_other_gpu(dev):
    x = torch.arange(6.0, device=f"{dev}:0")
    x[torch.tensor([1, 2], device=f"{dev}:1")] = 7.0
    return [x.device, x.cpu()]


@case("index_put_ with :1 indices and accumulate", needs_2=True)
def _n_index_put_acc_other_gpu(dev):
    x = torch.zeros(4, device=f"{dev}:0")
    x.index_put_((torch.tensor([1, 1], device=f"{dev}:1"),), torch.ones(2, device=f"{dev}:0"), accumulate=True)
    return x.cpu()


@case("index_put_ with a 0-dim :1 value", needs_2=True)
def _n_index_put_value_other_gpu(dev):
    x = torch.zeros(4, device=f"{dev}:0")
    x[torch.tensor([0, 3], device=f"{dev}:0")] = torch.tensor(5.0, device=f"{dev}:1")
    return [x.device, x.cpu()]


@case("torch.where with a 0-dim :1 fill value", needs_2=True)
def _n_where_other_gpu_scalar(dev):
    x = torch.arange(4.0, device=f"{dev}:0")
    return torch.where(x > 1, x, torch.tensor(-1.0, device=f"{dev}:1"))


@case("torch.where with a :1 condition first", needs_2=True)
def _n_where_condition_on_1(dev):
    x = torch.arange(4.0, device=f"{dev}:0")
    return torch.where(torch.tensor(True, device=f"{dev}:1"), x, torch.tensor(0.0, device=f"{dev}:0"))


@case("masked_fill_ with a 0-dim :1 value", needs_2=True)
def _n_masked_fill_other_gpu(dev):
    x = torch.zeros(3, device=f"{dev}:0")
    return x.masked_fill_(x == 0, torch.tensor(2.0, device=f"{dev}:1")).cpu()


@case("index_fill_ with a 0-dim :1 value", needs_2=True)
def _n_index_fill_other_gpu(dev):
    x = torch.zeros(3, device=f"{dev}:0")
    return x.index_fill_(0, torch.tensor([1], device=f"{dev}:0"), torch.tensor(4.0, device=f"{dev}:1")).cpu()


@case("linspace between 0-dim tensors of :0 and :1", needs_2=True)
def _n_linspace_two_gpus(dev):
    return torch.linspace(torch.tensor(0.0, device=f"{dev}:0"), torch.tensor(1.0, device=f"{dev}:1"), 3)


@case("block_diag of :0 and :1 blocks", needs_2=True)
def _n_block_diag_two_gpus(dev):
    return torch.block_diag(torch.ones(1, 1, device=f"{dev}:0"), torch.ones(2, 2, device=f"{dev}:1"))


@case("cholesky_solve with the factor on :1", needs_2=True)
def _n_cholesky_solve_two_gpus(dev):
    return torch.cholesky_solve(torch.ones(2, 1, device=f"{dev}:0"), torch.eye(2, device=f"{dev}:1"))


@case("torch.rsub of a :1 tensor and a :0 tensor", needs_2=True)
def _n_rsub_two_gpus(dev):
    return torch.rsub(torch.ones(3, device=f"{dev}:1"), torch.ones(3, device=f"{dev}:0"))


@case("BCE with logits on :0 and targets on :1", needs_2=True)
def _n_bce_logits_two_gpus(dev):
    return torch.nn.functional.binary_cross_entropy_with_logits(torch.zeros(3, device=f"{dev}:0"),
                                                                torch.ones(3, device=f"{dev}:1"))


@case("nn.Embedding on :0 given ids on :1", needs_2=True)
def _n_embedding_two_gpus(dev):
    return torch.nn.Embedding(5, 2).to(f"{dev}:0")(torch.tensor([1, 2], device=f"{dev}:1"))


@case("nn.LayerNorm on :1 given a batch on :0", needs_2=True)
def _n_layer_norm_two_gpus(dev):
    return torch.nn.LayerNorm(4).to(f"{dev}:1")(torch.ones(2, 4, device=f"{dev}:0"))


@case("torch.cat of :0 and :1 tensors", needs_2=True)
def _n_cat_two_gpus(dev):
    return torch.cat([torch.ones(2, device=f"{dev}:0"), torch.ones(2, device=f"{dev}:1")])


# ---------------------------------------------------------------- issue 27: checkpoints of views
# torch.save writes each storage once, whole, with every tensor's offset, size and stride: views saved together
# load as views of one storage again, wherever map_location puts it.
def _saved_and_loaded(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


@case("torch.save of two overlapping views of a device tensor: one storage after load")
def _v_views_saved_together(dev):
    base = torch.arange(10.0, device=dev)
    sd = _saved_and_loaded({"head": base[:4], "tail": base[2:6]})
    sd["head"][2] = 100.0  # the same element as tail[0]
    return [sd["tail"].device, sd["tail"].storage_offset(), sd["tail"].cpu(), sd["head"].untyped_storage().nbytes()]


@case("torch.load(map_location='cpu') of views of a device tensor keeps them views of one storage")
def _v_views_to_cpu(dev):
    base = torch.arange(10.0, device=dev)
    sd = _saved_and_loaded({"head": base[:4], "tail": base[2:6]}, map_location="cpu")
    sd["tail"][0] = -1.0
    return [sd["head"].device, sd["head"], sd["tail"].storage_offset(),
            sd["head"].untyped_storage().data_ptr() == sd["tail"].untyped_storage().data_ptr()]


@case("torch.load(map_location=device) of views of a cpu tensor keeps them views of one storage")
def _v_cpu_views_to_device(dev):
    base = torch.arange(12.0).reshape(3, 4)
    sd = _saved_and_loaded({"row": base[1], "col": base[:, 2]}, map_location=dev)
    sd["row"][2] = 50.0  # base[1, 2], also col[1]
    return [sd["col"].device, sd["col"].stride(), sd["col"].storage_offset(), sd["col"].cpu(),
            sd["col"].untyped_storage().nbytes()]


@case("torch.save of a transposed device tensor keeps its strides")
def _v_transposed_saved(dev):
    w = torch.arange(6.0, device=dev).reshape(2, 3).t()
    y = _saved_and_loaded(w)
    return [y.device, y.shape, y.stride(), y.is_contiguous(), torch.equal(y, w)]


@case("torch.save of a device tensor and a view of it as another dtype")
def _v_dtype_view_saved(dev):
    x = torch.zeros(4, device=dev)
    sd = _saved_and_loaded({"f": x, "i": x.view(torch.int32)})
    sd["f"][0] = 1.0
    return [sd["i"].dtype, sd["i"][0].item(), sd["i"].device]


@case("torch.save of a 2-element slice of a large device tensor writes the whole storage")
def _v_slice_file_size(dev):
    big = torch.zeros(2**16, device=dev)
    sizes = []
    for t in (big[:2], big[:2].clone()):
        buf = io.BytesIO()
        torch.save(t, buf)
        sizes.append(len(buf.getvalue()))
    return [sizes[0] > 2**18, sizes[1] < 2**12]


@case("a device Parameter and a view of it saved together")
def _v_parameter_and_view(dev):
    p = torch.nn.Parameter(torch.zeros(2, 3, device=dev))
    sd = _saved_and_loaded({"w": p, "row": p[1]})
    with torch.no_grad():
        sd["w"][1, 0] = 7.0
    return [type(sd["w"]).__name__ == "Parameter" or isinstance(sd["w"], torch.nn.Parameter),
            sd["w"].requires_grad, sd["row"].requires_grad, sd["row"].storage_offset(), sd["row"].detach().cpu()]


@case("tied weights in a device state_dict load as one storage")
def _v_tied_state_dict(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False)).to(dev)
    model[1].weight = model[0].weight
    sd = _saved_and_loaded(model.state_dict())
    return [sorted(sd), sd["0.weight"].device, sd["0.weight"].data_ptr() == sd["1.weight"].data_ptr()]


@case("torch.load with map_location :1 of views saved on :0", needs_2=True)
def _v_views_to_other_gpu(dev):
    base = torch.arange(8.0, device=f"{dev}:0")
    sd = _saved_and_loaded([base[1:5], base[3:]], map_location=f"{dev}:1")
    sd[0][2] = -3.0  # base[3], also the second view's first element
    return [sd[1].device, sd[1].storage_offset(), sd[1].cpu()]


# ---------------------------------------------------------------- issue 27: what p.data = ... leaves
# VariableHooks::set_data re-points the tensor at the new data and leaves the rest: the same Parameter object
# (the optimizer's), requires_grad, and its .grad where it was.
@case("p.data = p.data.to(device) keeps the Parameter the optimizer holds")
def _d_set_data_keeps_parameter(dev):
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1)
    p.data = p.data.to(dev)
    (p * 2).sum().backward()
    opt.step()
    return [p.device, isinstance(p, torch.nn.Parameter), p.is_leaf, p.requires_grad,
            opt.param_groups[0]["params"][0] is p, p.grad.device, p.detach().cpu()]


@case("p.data = p.data.to(device) leaves an existing .grad on the cpu")
def _d_set_data_leaves_grad(dev):
    p = torch.nn.Parameter(torch.ones(3))
    (p * 2).sum().backward()
    p.data = p.data.to(dev)
    return [p.device, p.grad.device, p.grad]


@case("p.data = p.data.to(device), then backward into the cpu .grad")
def _d_set_data_then_backward(dev):
    p = torch.nn.Parameter(torch.ones(3))
    (p * 2).sum().backward()
    p.data = p.data.to(dev)
    (p * 3).sum().backward()
    return [p.grad.device, p.grad.cpu()]


@case("p.data = p.data.to(device) after an Adam step, then step again")
def _d_set_data_adam_state(dev):
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.Adam([p], lr=0.1)
    (p * 2).sum().backward()
    opt.step()
    p.data = p.data.to(dev)
    p.grad = None
    (p * 2).sum().backward()
    opt.step()
    return [p.device, opt.state[p]["exp_avg"].device]


@case("moving an optimizer's state with .data = .data.to(device), then a step")
def _d_optimizer_to_device(dev):
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.Adam([p], lr=0.1)
    (p * 2).sum().backward()
    opt.step()
    p.data = p.data.to(dev)
    p._grad.data = p._grad.data.to(dev)
    for state in opt.state.values():
        for value in state.values():
            if isinstance(value, torch.Tensor):
                value.data = value.data.to(dev)
    opt.step()
    st = opt.state[p]
    return [p.device, p.grad.device, st["exp_avg"].device, st["step"].device, st["step"].item(), p.detach().cpu()]


@case("p.data = p.data.cpu() leaves the device .grad")
def _d_set_data_to_cpu(dev):
    p = torch.nn.Parameter(torch.ones(3, device=dev))
    (p * 2).sum().backward()
    p.data = p.data.cpu()
    return [p.device, p.grad.device, isinstance(p, torch.nn.Parameter)]


@case("p.data = p.data.half() on the device keeps the Parameter and its float32 .grad")
def _d_set_data_half(dev):
    p = torch.nn.Parameter(torch.ones(3, device=dev))
    (p * 2).sum().backward()
    p.data = p.data.half()
    return [p.dtype, p.device, isinstance(p, torch.nn.Parameter), p.grad.dtype]


@case("a hook of a device parameter that raises during backward")
def _d_raising_leaf_hook(dev):
    p = torch.nn.Parameter(torch.ones(3, device=dev))

    def refuse(grad):
        raise ValueError(f"refused a gradient of shape {tuple(grad.shape)}")

    p.register_hook(refuse)
    (p * 2).sum().backward()
    return p.grad


@case("a hook of a device activation that raises during backward, then backward again")
def _d_raising_activation_hook(dev):
    p = torch.nn.Parameter(torch.ones(3, device=dev))
    y = p * 2
    y.register_hook(lambda g: 1 / 0)
    try:
        y.sum().backward()
    except ZeroDivisionError:
        pass
    (p * 3).sum().backward()
    return p.grad.cpu()


@case("p.data = a device tensor of another shape")
def _d_set_data_other_shape(dev):
    p = torch.nn.Parameter(torch.ones(3, device=dev))
    p.data = torch.zeros(2, 2, device=dev)
    (p * 1).sum().backward()
    return [p.shape, p.device, p.grad.shape, p.grad.device]


@case("p.data = p.data.to(:1) leaves its .grad on :0", needs_2=True)
def _d_set_data_other_gpu(dev):
    p = torch.nn.Parameter(torch.ones(3, device=f"{dev}:0"))
    (p * 2).sum().backward()
    p.data = p.data.to(f"{dev}:1")
    return [p.device, p.grad.device]


# ---------------------------------------------------------------- issue 27: modules on meta, torch.func
# Module._apply keeps a parameter object only where the old and new tensors share a TensorImpl type (cpu and
# the accelerator); a move to or from meta makes new Parameter objects (compute_should_use_set_data).
@case("a device model moved to meta gets new Parameter objects")
def _m_device_to_meta(dev):
    model = torch.nn.Linear(2, 3).to(dev)
    w = model.weight
    model.to("meta")
    return [model.weight.device, model.weight is w, w.device]


@case("to('meta') then to_empty(device=...): new Parameter objects, an optimizer keeps the old")
def _m_to_empty_identity(dev):
    model = torch.nn.Linear(2, 3)
    model.to("meta")
    w = model.weight
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to_empty(device=dev)
    return [model.weight.device, model.weight is w, opt.param_groups[0]["params"][0].device]


@case("a model built under torch.device('meta'), to_empty(device=...), reset_parameters")
def _m_meta_context_to_empty(dev):
    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    model.to_empty(device=dev)
    for m in model:
        m.reset_parameters()
    out = model(torch.ones(4, 2, device=dev))
    return [out.device, model[1].running_mean.device, model[1].num_batches_tracked.item()]


@case("functional_call of a meta module with device parameters and buffers")
def _m_functional_call_meta(dev):
    skeleton = torch.nn.BatchNorm1d(3).to("meta")
    state = dict(torch.nn.BatchNorm1d(3).to(dev).state_dict())
    out = torch.func.functional_call(skeleton, state, (torch.arange(12.0, device=dev).reshape(4, 3),))
    return [out.device, out.shape, state["num_batches_tracked"].item(), state["running_mean"].cpu(),
            skeleton.running_mean.device]


@case("functional_call of a meta module given only its parameters")
def _m_functional_call_meta_buffers(dev):
    skeleton = torch.nn.BatchNorm1d(3).to("meta").eval()
    params = {k: v.to(dev) for k, v in torch.nn.BatchNorm1d(3).named_parameters()}
    return torch.func.functional_call(skeleton, params, (torch.ones(4, 3, device=dev),))


@case("functional_call of a device module with a meta weight")
def _m_functional_call_meta_weight(dev):
    model = torch.nn.Linear(2, 3).to(dev)
    return torch.func.functional_call(model, {"weight": torch.empty(3, 2, device="meta")},
                                      (torch.ones(1, 2, device=dev),))


@case("model ensembling: vmap of functional_call over stacked device parameters, base model on meta")
def _m_ensemble_vmap(dev):
    import copy

    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 2).to(dev) for _ in range(4)]
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def one(p, b, x):
        return torch.func.functional_call(base, (p, b), (x,))

    x = torch.ones(5, 3, device=dev)
    out = torch.vmap(one, in_dims=(0, 0, None))(params, buffers, x)
    return [out.device, out.shape, torch.allclose(out[2].cpu(), models[2](x).cpu()), base.weight.device]


@case("torch.func.grad of a loss through functional_call of a meta model")
def _m_func_grad_meta(dev):
    base = torch.nn.Linear(3, 1).to("meta")
    params = {"weight": torch.ones(1, 3, device=dev), "bias": torch.zeros(1, device=dev)}

    def loss(p, x):
        return torch.func.functional_call(base, p, (x,)).pow(2).sum()

    g = torch.func.grad(loss)(params, torch.ones(2, 3, device=dev))
    return [g["weight"].device, g["weight"].cpu(), g["bias"].cpu()]


@case("load_state_dict of a device checkpoint into a meta model: copies nothing; assign=True takes it")
def _m_load_into_meta(dev):
    with torch.device("meta"):
        model = torch.nn.Linear(2, 3)
    sd = torch.nn.Linear(2, 3).to(dev).state_dict()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.load_state_dict(sd)
    before = model.weight.device
    model.load_state_dict(sd, assign=True)
    return [before, any("meta" in str(w.message) for w in caught), model.weight.device,
            isinstance(model.weight, torch.nn.Parameter), model.weight.data_ptr() == sd["weight"].data_ptr()]


@case("copy_ of a device tensor into a meta tensor")
def _m_copy_into_meta(dev):
    return torch.empty(3, device="meta").copy_(torch.ones(3, device=dev))


@case("torch.func.functional_call with strict=True on a meta module missing a buffer")
def _m_functional_call_strict(dev):
    skeleton = torch.nn.BatchNorm1d(3).to("meta")
    params = {k: v.to(dev) for k, v in torch.nn.BatchNorm1d(3).named_parameters()}
    return torch.func.functional_call(skeleton, params, (torch.ones(4, 3, device=dev),), strict=True)


# ---------------------------------------------------------------- issue 27: pinned copies of non-contiguous tensors
# _pin_memory (aten/src/ATen/native/Memory.cpp) copies into pinned storage of the tensor's own sizes and strides;
# copy_kernel_cuda stages a copy whose two sides differ in layout (copy_requires_temporaries) through a
# contiguous, pageable temporary, which cudaMemcpyAsync copies before it returns.
@case("pin_memory of a transposed tensor keeps its strides")
def _p_pin_transposed(dev):
    t = torch.arange(12.0).reshape(3, 4).t()
    p = t.pin_memory()
    return [p.is_pinned(), p.stride(), p.is_contiguous(), torch.equal(p, t), t.is_pinned()]


@case("pin_memory of a column slice: strides, offset and storage size")
def _p_pin_column_slice(dev):
    s = torch.arange(16.0).reshape(4, 4)[:, 1::2]
    p = s.pin_memory()
    return [p.is_pinned(), p.stride(), p.storage_offset(), p.untyped_storage().nbytes(), p.contiguous()]


@case("pin_memory of an expanded tensor")
def _p_pin_expanded(dev):
    return torch.arange(3.0).expand(4, 3).pin_memory()


@case("empty_like(pin_memory=True) of a transposed tensor")
def _p_empty_like_pinned(dev):
    p = torch.empty_like(torch.zeros(3, 4).t(), pin_memory=True)
    return [p.is_pinned(), p.stride(), p.device]


@case("a slice of a pinned tensor is pinned, its contiguous copy is not")
def _p_pinned_views(dev):
    buf = torch.zeros(4, 6).pin_memory()
    return [buf[:, :3].is_pinned(), buf.t().is_pinned(), buf[1:].is_pinned(), buf[:, :3].contiguous().is_pinned()]


@case("non_blocking upload from a pinned column slice: the host may write right after")
def _p_upload_from_pinned_slice(dev):
    s = torch.arange(16.0).reshape(4, 4)[:, ::2].pin_memory()
    d = s.to(dev, non_blocking=True)
    s.fill_(-1.0)
    return [d.stride(), d.cpu()]


@case("non_blocking upload from a pinned transposed tensor keeps its strides")
def _p_upload_transposed(dev):
    p = torch.arange(12.0).reshape(3, 4).t().pin_memory()
    d = p.to(dev, non_blocking=True)
    getattr(torch, dev).synchronize()
    return [d.stride(), d.is_contiguous(), torch.equal(d.cpu(), p)]


@case("non_blocking download into a transposed pinned buffer, read at once")
def _p_download_into_transposed(dev):
    buf = torch.empty(4, 3, pin_memory=True).t()
    buf.copy_(torch.arange(12.0, device=dev).reshape(3, 4), non_blocking=True)
    return [buf.is_pinned(), buf.sum().item()]


@case("non_blocking download into a column slice of a pinned buffer, read at once")
def _p_download_into_slice(dev):
    buf = torch.zeros(4, 6, pin_memory=True)
    view = buf[:, :3]
    view.copy_(torch.ones(4, 3, device=dev), non_blocking=True)
    return [view.is_pinned(), view.sum().item(), buf.sum().item()]


@case("to(cpu, non_blocking=True) of a transposed device tensor: pinned, strides kept")
def _p_download_transposed(dev):
    x = torch.arange(12.0, device=dev).reshape(3, 4).t()
    out = x.to("cpu", non_blocking=True)
    getattr(torch, dev).synchronize()
    return [out.is_pinned(), out.stride(), out.sum().item()]


# ---------------------------------------------------------------- issue 27: storage data pointers
# A device tensor's storage is its allocator block: views share it (data_ptr = storage's + offset * itemsize),
# the caching allocator hands out 512-byte aligned blocks and gives a freed block to the next request it fits.
@case("untyped_storage().data_ptr() of a device tensor and its views")
def _s_storage_ptr_views(dev):
    x = torch.arange(10.0, device=dev)
    v = x[2:6]
    return [x.untyped_storage().data_ptr() == x.data_ptr(), v.untyped_storage().data_ptr() == x.data_ptr(),
            v.data_ptr() - x.data_ptr(), v.storage_offset(), v.untyped_storage().nbytes(),
            x.t().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()]


@case("untyped_storage() of a device tensor: device, nbytes, len")
def _s_storage_attributes(dev):
    st = torch.ones(2, 3, device=dev)[1].untyped_storage()
    return [st.device, st.nbytes(), len(st), st.size(), isinstance(st, torch.UntypedStorage)]


@case("data_ptr across to(), contiguous(), reshape() and view() of a device tensor")
def _s_ptr_sharing(dev):
    x = torch.arange(6.0, device=dev).reshape(2, 3)
    p = x.data_ptr()
    return [x.to(dev).data_ptr() == p, x.to(dev, copy=True).data_ptr() == p, x.to(torch.float16).data_ptr() == p,
            x.contiguous().data_ptr() == p, x.t().contiguous().data_ptr() == p, x.reshape(3, 2).data_ptr() == p,
            x.t().reshape(6).data_ptr() == p, x.view(torch.int32).data_ptr() == p]


@case("a freed device tensor's address goes to the next tensor of its size")
def _s_address_reused(dev):
    import gc

    gc.collect()  # no earlier case's garbage freed in between
    x = torch.empty(256, device=dev)
    p = x.data_ptr()
    del x
    y = torch.empty(256, device=dev)
    z = torch.empty(256, device=dev)
    return [y.data_ptr() == p, z.data_ptr() == p]


@case("data_ptr alignment of device tensors, and of an empty one")
def _s_alignment(dev):
    x = torch.empty(3, device=dev)
    return [x.data_ptr() % 512, x[1:].data_ptr() % 512, torch.empty(0, device=dev).data_ptr()]


@case("model size from untyped_storage().nbytes() of its parameters")
def _s_model_size(dev):
    model = torch.nn.Linear(10, 5).to(dev)
    return sum(p.untyped_storage().nbytes() for p in model.parameters())


@case("storage() of a device tensor and of its view (TypedStorage)")
def _s_typed_storage(dev):
    x = torch.arange(10.0, device=dev)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = x[3:].storage()
        return [st.size(), st.device, st.dtype, st.data_ptr() == x.data_ptr(), x[3:].storage_offset()]


@case("untyped_storage().resize_(0) frees a device tensor's memory")
def _s_storage_resize_frees(dev):
    mod = getattr(torch, dev)
    x = torch.empty(2**18, device=dev)
    before = mod.memory_allocated()
    x.untyped_storage().resize_(0)
    freed = before - mod.memory_allocated()
    x.untyped_storage().resize_(2**20)
    return [freed, x.shape, x.untyped_storage().nbytes(), mod.memory_allocated() - before]


@case("device tensors on :0 and :1 have different addresses", needs_2=True)
def _s_two_gpus_addresses(dev):
    a = torch.empty(256, device=f"{dev}:0")
    b = torch.empty(256, device=f"{dev}:1")
    return [a.data_ptr() != b.data_ptr(), a.untyped_storage().device, b.untyped_storage().device]


def device_count(device_type: str) -> int:
    mod = getattr(torch, device_type, None)
    try:
        return int(mod.device_count()) if mod is not None else 0
    except Exception:
        return 0


def run_case(name, fn, needs_2, device_type, n_dev):
    row = {"case": name, "needs_2_devices": needs_2}
    if needs_2 and n_dev < 2:
        row.update(skipped=f"needs 2 devices, {device_type} has {n_dev}")
        return row
    try:
        v = fn(device_type)
        row.update(raised=False, exc_type=None, message=None, value=_summ(v))
    except Exception as e:  # noqa: BLE001
        row.update(raised=True, exc_type=type(e).__name__, message=normalise(error_text(e)), value=None)
    return row


def run_all(device_type: str) -> list[dict]:
    n_dev = device_count(device_type)
    return [run_case(n, f, two, device_type, n_dev) for n, f, two in CASES]


def to_markdown(rows: list[dict], title: str = "") -> str:
    out = [f"### {title}\n"] if title else []
    out.append("| case | 2 dev | raised | type | message / value |\n|---|---|---|---|---|\n")
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['case']} | {'yes' if r['needs_2_devices'] else ''} | skipped | | {r['skipped']} |\n")
            continue
        text = r["message"] if r["raised"] else r["value"]
        text = (text or "").replace("|", "\\|").replace("\n", " ")
        if len(text) > 200:
            text = text[:200] + "..."
        out.append(
            f"| {r['case']} | {'yes' if r['needs_2_devices'] else ''} | {'yes' if r['raised'] else 'no'} "
            f"| {r['exc_type'] or ''} | {text} |\n"
        )
    return "".join(out)


def machine(device_type: str) -> dict:
    """Which cards, driver, Python and date produced a table: kept with the outcomes."""
    from grader.engine.machine import describe as describe_machine

    m = describe_machine()
    info = {"python": m["python"], "date": m["date"]}
    if device_type == "cuda" and m["gpus"]:
        info.update(cards=m["gpus"], cuda=m["cuda"], driver=m["driver"])
    return info


def describe(data: dict) -> str:
    cards = ", ".join(data.get("cards", [])) or data["device"]
    extra = f", driver {data['driver']}, CUDA {data['cuda']}" if data.get("driver") else ""
    return (f"{cards} ({data['device_count']} device(s){extra}, torch {data['torch']}, "
            f"Python {data.get('python', '?')}, {data.get('date', '?')})")


# ---------------------------------------------------------------- building on meta (issue 43)
@case("Module.to(device) of a model built on meta")
def _c_meta_module_to(dev):
    with torch.device("meta"):
        m = torch.nn.Linear(2, 2)
    try:  # a NotImplementedError raised from the case would read as the simulator's own gap
        m.to(dev)
    except NotImplementedError as exc:
        return ["NotImplementedError", str(exc)]
    return m.weight.device


@case("to_empty under deterministic algorithms leaves NaN")
def _c_meta_to_empty_nan(dev):
    with torch.device("meta"):
        m = torch.nn.Linear(2, 2)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        m.to_empty(device=dev)
    finally:
        torch.use_deterministic_algorithms(False)
    return [m.weight.device, bool(m.weight.isnan().all()), bool(m.bias.isnan().all())]


@case("load_state_dict of device tensors into a meta model")
def _c_meta_load_no_op(dev):
    import warnings

    state = {k: v.to(dev) for k, v in torch.nn.Linear(2, 2).state_dict().items()}
    with torch.device("meta"):
        m = torch.nn.Linear(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = m.load_state_dict(state)
    return [m.weight.device, str(result), sum("which is a no-op" in str(w.message) for w in caught)]


@case("load_state_dict(assign=True) of device tensors into a meta model")
def _c_meta_load_assign(dev):
    state = {k: v.to(dev) for k, v in torch.nn.BatchNorm1d(3).state_dict().items()}
    with torch.device("meta"):
        m = torch.nn.BatchNorm1d(3)
    m.load_state_dict(state, assign=True)
    return [m.weight.device, m.running_mean.device, isinstance(m.weight, torch.nn.Parameter),
            m.weight.requires_grad, m.weight.data_ptr() == state["weight"].data_ptr()]



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="device type: cuda, sim, mps ...")
    ap.add_argument("--count", type=int, default=2, help="sim only: number of devices")
    ap.add_argument("--out", help="write the JSON table here")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--markdown-from", help="render an existing JSON table as markdown")
    ap.add_argument("--add-missing", metavar="TABLE",
                    help="run only the cases TABLE lacks and add their rows to it (a few new cases, on a machine of "
                         "as many devices as the table's)")
    args = ap.parse_args(argv)
    if args.add_missing:
        return _add_missing(args.add_missing, args.device)
    if args.markdown_from:
        with open(args.markdown_from) as f:
            data = json.load(f)
        print(to_markdown(data["rows"], describe(data)))
        return 0
    if args.device == "sim":
        import grader.simulated as gs

        gs.install(count=args.count)
    rows = run_all(args.device)
    data = {
        "device": args.device,
        "device_count": device_count(args.device),
        "torch": torch.__version__,
        **machine(args.device),
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
    if args.markdown or not args.out:
        print(to_markdown(rows, describe(data)))
    return 0


def _add_missing(table: str, device_type: str) -> int:
    with open(table) as f:
        data = json.load(f)
    known = {r["case"] for r in data["rows"]}
    n_dev = device_count(device_type)
    if n_dev != data.get("device_count"):
        print(f"{table} was recorded with {data.get('device_count')} devices, this machine has {n_dev}",
              file=sys.stderr)
        return 2
    added = [run_case(n, f, two, device_type, n_dev) for n, f, two in CASES if n not in known]
    for row in added:
        row["recorded"] = f"{torch.__version__}, {machine(device_type)}"  # later than the table's own date
    data["rows"] += added
    with open(table, "w") as f:
        json.dump(data, f, indent=1)
    print(to_markdown(added, f"added to {table}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
