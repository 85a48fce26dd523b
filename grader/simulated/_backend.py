"""Implementation of the simulated accelerator (imported only by ``install``).

Design
------
* Every device tensor is a ``SimTensor``: a wrapper tensor subclass (made with
  ``torch.Tensor._make_wrapper_subclass``) whose ``device`` is ``sim:N`` and
  whose real data lives in a CPU tensor (``_data``).  Autograd runs above the
  wrapper (the AutogradPrivateUse1 key), every aten op below autograd reaches
  ``SimTensor.__torch_dispatch__``, which checks device placement the way
  CUDA does, runs the op on the CPU data, books a launch on the virtual device
  clock and wraps the results.
* Factory functions with ``device="sim..."`` reach the PrivateUse1 kernels
  registered for ``aten::empty.memory_format`` / ``aten::empty_strided``
  (zeros/ones/randn/arange/... are composite ops built on them).
* Pinned host memory: CPU kernels of ``aten::is_pinned`` / ``aten::_pin_memory``
  are overridden so that pinning clones the tensor into a CPU storage that is
  flagged "pinned" (tracked by storage address, cleared when the storage dies).
"""

from __future__ import annotations

import contextlib
import threading
import warnings
import weakref

import torch

from .allocator import CachingAllocator as _Allocator
from .allocator import round_block as _round
from .instruments import SyncRecord
from .instruments import note_copy as _note_copy
from .instruments import recorders as _recorders

aten = torch.ops.aten

DEVICE_TYPE = "sim"

# --------------------------------------------------------------------------
# configuration (set by configure())
# --------------------------------------------------------------------------
_COUNT = 2
_PROFILE = "cuda"
_CURRENT = [0]

# virtual costs, microseconds
LAUNCH_US = 5.0          # host time to launch one op
KERNEL_US = 20.0         # device time of one op
COPY_FIXED_US = 10.0     # device time of one copy, fixed part
COPY_BYTES_PER_US = 12_000.0  # ~12 GB/s host<->device
D2D_BYTES_PER_US = 50_000.0

MPS_DOUBLE_MSG = (
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework "
    "doesn't support float64. Please use float32 instead."
)


def configure(count: int, profile: str) -> None:
    global _COUNT, _PROFILE
    _COUNT = int(count)
    _PROFILE = profile
    _clock.reset(_COUNT)
    _allocators.clear()
    _allocators.extend(_Allocator() for _ in range(_COUNT))


# --------------------------------------------------------------------------
# virtual clock and device queue
# --------------------------------------------------------------------------
class _Clock:
    def __init__(self):
        self.reset(2)

    def reset(self, count):
        self.host = 0.0
        self.device = [0.0] * count
        self.pending = []  # (complete_time, device_index, dst_cpu, src_snapshot)


_clock = _Clock()
_tls = threading.local()


def host_time() -> float:
    """Virtual host clock, in milliseconds."""
    return _clock.host / 1000.0


def device_time(device=None) -> float:
    """Virtual time (ms) at which the device's queue will be empty."""
    return _clock.device[_index(device)] / 1000.0


def _launch(idx, cost=KERNEL_US, name=None):
    c = _clock
    c.host += LAUNCH_US
    d = c.device[idx]
    c.device[idx] = (c.host if c.host > d else d) + cost
    if _recorders:
        for rec in _recorders:
            rec.launches += 1
            if name is not None:
                rec.ops[name] = rec.ops.get(name, 0) + 1


def _apply_pending():
    c = _clock
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


def _sync(reason, idx=None):
    """Host waits for device ``idx`` (all devices when None). Recorded once per
    outermost user-visible reason (nested syncs inside e.g. print are folded)."""
    c = _clock
    if idx is None:
        t = max(c.device) if c.device else c.host
    else:
        t = c.device[idx]
    if t > c.host:
        c.host = t
    _apply_pending()
    outer = getattr(_tls, "reason", None)
    if outer is not None:
        if _tls.recorded:
            return
        _tls.recorded = True
        reason = outer
    if _recorders:
        r = SyncRecord(reason, None if idx is None else f"{DEVICE_TYPE}:{idx}")
        for rec in _recorders:
            rec.syncs.append(r)


@contextlib.contextmanager
def _reason(reason):
    """Label the sync points that happen inside (outermost label wins)."""
    if getattr(_tls, "reason", None) is not None:
        yield
        return
    _tls.reason = reason
    _tls.recorded = False
    try:
        yield
    finally:
        _tls.reason = None


_allocators: list[_Allocator] = [_Allocator(), _Allocator()]


class _StorageRef:
    """One per live CPU storage backing device tensors; shared by all views.
    Dies with the last SimTensor that references it -> block released."""

    __slots__ = ("key", "size", "idx", "__weakref__")

    def __init__(self, key, size, idx):
        self.key = key
        self.size = size
        self.idx = idx

    def __del__(self):
        try:
            _allocators[self.idx].release(self.size)
        except Exception:
            pass


_live: "weakref.WeakValueDictionary[int, _StorageRef]" = weakref.WeakValueDictionary()


# --------------------------------------------------------------------------
# pinned host memory
# --------------------------------------------------------------------------
_pinned: dict[int, int] = {}  # storage data_ptr -> nbytes


def _storage_key(t):
    return t.untyped_storage().data_ptr()


def _is_pinned_cpu(t) -> bool:
    if not _pinned or t.device.type != "cpu":
        return False
    try:
        return _storage_key(t) in _pinned
    except Exception:
        return False


def _mark_pinned(t):
    st = t.untyped_storage()
    key = st.data_ptr()
    if key == 0:
        return t
    _pinned[key] = st.nbytes()
    weakref.finalize(st, _pinned.pop, key, None)
    return t


def _pin_memory_kernel(self, device=None):
    out = torch.empty_like(self, memory_format=torch.contiguous_format)
    out.copy_(self)
    return _mark_pinned(out)


def _is_pinned_kernel(self, device=None):
    return _is_pinned_cpu(self)


# --------------------------------------------------------------------------
# the wrapper tensor
# --------------------------------------------------------------------------
_DEVICES: list[torch.device] = []


def _dev(idx):
    while len(_DEVICES) <= idx:
        _DEVICES.append(torch.device(DEVICE_TYPE, len(_DEVICES)))
    return _DEVICES[idx]


def _check_index(idx):
    if idx < 0 or idx >= _COUNT:
        raise RuntimeError(
            f"{DEVICE_TYPE.upper()} error: invalid device ordinal\n"
            f"(simulated device {DEVICE_TYPE}:{idx} requested; "
            f"install(count={_COUNT}) provides {_COUNT} device(s))"
        )


def _index(device):
    if device is None:
        return _CURRENT[0]
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if device.index is None:
        return _CURRENT[0]
    return device.index


_make_wrapper = torch.Tensor._make_wrapper_subclass


class SimTensor(torch.Tensor):
    """A tensor on the simulated device; real data in ``self._data`` (CPU)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, data, idx):
        r = _make_wrapper(
            cls,
            data.size(),
            strides=data.stride(),
            storage_offset=data.storage_offset(),
            dtype=data.dtype,
            layout=data.layout,
            device=_dev(idx),
            requires_grad=False,
        )
        r._data = data
        r._idx = idx
        st = data.untyped_storage()
        key = st.data_ptr()
        ref = _live.get(key)
        if ref is None or ref.idx != idx:
            nbytes = st.nbytes()
            if _PROFILE == "mps" and data.dtype is torch.float64:
                raise TypeError(MPS_DOUBLE_MSG)
            ref = _StorageRef(key, _allocators[idx].alloc(nbytes), idx)
            if key:
                _live[key] = ref
        r._mem = ref
        return r

    def __init__(self, data, idx):
        pass

    # --- host-visible operations that are sync points --------------------
    def __repr__(self, *, tensor_contents=None):
        with _reason("print/repr"):
            _sync("print/repr", self._idx)
            s = torch._tensor_str._str(self, tensor_contents=tensor_contents)
        pre = type(self).__name__ + "("
        if s.startswith(pre):
            s = "tensor(" + s[len(pre):].replace("\n" + " " * len(pre), "\n" + " " * 7)
        if getattr(self, "_is_param", False):
            s = "Parameter containing:\n" + s
        return s

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def item(self):
        with _reason("item"):
            return super().item()

    def tolist(self):
        with _reason("tolist"):
            return self.detach().cpu().tolist()

    def __bool__(self):
        with _reason("bool"):
            return super().__bool__()

    def __float__(self):
        with _reason("item"):
            return super().__float__()

    def __int__(self):
        with _reason("item"):
            return super().__int__()

    def __index__(self):
        with _reason("item"):
            return super().__index__()

    def numpy(self, *, force=False):
        raise TypeError(
            f"can't convert {self.device} device type tensor to numpy. Use "
            "Tensor.cpu() to copy the tensor to host memory first."
        )

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __reduce_ex__(self, proto):
        # Same format torch uses for storage-less PrivateUse1 tensors: a CPU
        # copy plus the device string; torch.load honours map_location.
        return (
            torch._utils._rebuild_device_tensor_from_cpu_tensor,
            (self.detach().cpu(), self.dtype, str(self.device), self.requires_grad),
        )

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        h = _SPECIAL.get(func)
        if h is not None:
            return h(func, args, kwargs or {})
        return _generic(func, args, kwargs or {})


_META_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)
_set_storage = aten.set_.source_Storage_storage_offset


def _fix_meta(w):
    """An in-place/out= op changed the metadata of the CPU data (resize_,
    transpose_, ...): mirror sizes/strides onto the wrapper."""
    d = w._data
    if d.shape != w.shape or d.stride() != w.stride() or d.storage_offset() != w.storage_offset():
        _set_storage.redispatch(_META_KS, w, w.untyped_storage(), d.storage_offset(), d.size(), d.stride())
        st = d.untyped_storage()
        if st.data_ptr() != w._mem.key or st.nbytes() != 0 and w._mem.size < _round(st.nbytes()):
            # storage replaced or grown: account as a fresh allocation
            ref = _StorageRef(st.data_ptr(), _allocators[w._idx].alloc(st.nbytes()), w._idx)
            if ref.key:
                _live[ref.key] = ref
            w._mem = ref


def _wrap_out(out, idx, orig):
    if isinstance(out, torch.Tensor):
        w = orig.get(id(out))
        if w is not None:
            _fix_meta(w)
            return w
        if type(out) is SimTensor:
            return out
        return SimTensor(out, idx)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_out(o, idx, orig) for o in out)
    return out


def _same_device_error(a, b):
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two "
        f"devices, {a} and {b}!"
    )


# ops whose CUDA kernels check devices in codegen (message style differs)
_CODEGEN_CHECKED = {
    "addmm": "addmm", "mm": "mm", "bmm": "bmm", "baddbmm": "baddbmm",
    "addmv": "addmv", "index_select": "_index_select", "dot": "_dot",
    "embedding_dense_backward": "_embedding_dense_backward",
    "nll_loss_forward": "nll_loss_forward", "nll_loss2d_forward": "nll_loss2d_forward",
}

_VIEW_CACHE: dict = {}


def _is_view(func):
    v = _VIEW_CACHE.get(func)
    if v is None:
        v = bool(func.is_view) or func.__name__.split(".")[0] in (
            "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "_unsafe_view",
            "detach", "alias", "lift_fresh",
        )
        _VIEW_CACHE[func] = v
    return v


def _codegen_check(func, args, kwargs, name):
    common = None
    schema_args = func._schema.arguments
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            d = a.device
            if common is None:
                common = d
            elif d != common:
                argname = schema_args[i].name if i < len(schema_args) else f"arg{i}"
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but got "
                    f"{argname} is on {d}, different from other tensors on {common} "
                    f"(when checking argument in method wrapper_{DEVICE_TYPE.upper()}_{name})"
                )


def _generic(func, args, kwargs, impl=None):
    # ---- unwrap, find common device, check placement (TensorIterator rules)
    common = -1
    bad = None
    orig = {}
    uargs = []
    cpu_nonscalar = False
    out_kw = kwargs.get("out") if kwargs else None
    if out_kw is not None and isinstance(out_kw, torch.Tensor):
        if type(out_kw) is SimTensor:
            common = out_kw._idx
        else:
            cpu_nonscalar = True
    for a in args:
        if isinstance(a, torch.Tensor):
            if type(a) is SimTensor:
                i = a._idx
                if common < 0:
                    common = i
                elif i != common and bad is None:
                    bad = i
                d = a._data
                orig[id(d)] = a
                uargs.append(d)
            else:
                if a.dim() != 0 or a.device.type != "cpu":
                    cpu_nonscalar = True
                uargs.append(a)
        elif isinstance(a, (list, tuple)) and a and (
            isinstance(a[0], torch.Tensor) or a[0] is None or (len(a) > 1 and isinstance(a[-1], torch.Tensor))
        ):
            lst = []
            for b in a:
                if type(b) is SimTensor:
                    i = b._idx
                    if common < 0:
                        common = i
                    elif i != common and bad is None:
                        bad = i
                    orig[id(b._data)] = b
                    lst.append(b._data)
                else:
                    if isinstance(b, torch.Tensor) and (b.dim() != 0 or b.device.type != "cpu"):
                        cpu_nonscalar = True
                    lst.append(b)
            uargs.append(type(a)(lst))
        else:
            uargs.append(a)
    if kwargs:
        ukw = {}
        for k, v in kwargs.items():
            if type(v) is SimTensor:
                i = v._idx
                if common < 0:
                    common = i
                elif i != common and bad is None:
                    bad = i
                orig[id(v._data)] = v
                ukw[k] = v._data
            else:
                if isinstance(v, torch.Tensor) and (v.dim() != 0 or v.device.type != "cpu"):
                    cpu_nonscalar = True
                ukw[k] = v
    else:
        ukw = kwargs

    name = func._opname if hasattr(func, "_opname") else func.__name__.split(".")[0]
    if bad is not None or cpu_nonscalar:
        cg = _CODEGEN_CHECKED.get(name)
        if cg is not None:
            _codegen_check(func, args, kwargs, cg)
        if name == "embedding" and args[0].device != args[1].device:
            # CUDA's embedding runs index_select(weight, 0, indices)
            raise RuntimeError(
                "Expected all tensors to be on the same device, but got index is on "
                f"{args[1].device}, different from other tensors on {args[0].device} "
                f"(when checking argument in method wrapper_{DEVICE_TYPE.upper()}__index_select)"
            )
        if name == "convolution" or name == "convolution_backward":
            _conv_check(args)
        if bad is not None:
            raise _same_device_error(_dev(common), _dev(bad))
        if name in ("index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"):
            pass  # CPU indices may index a device tensor (as on CUDA)
        elif name not in _MIXED_OK:
            # a non-scalar CPU tensor (or a CPU tensor as output) meets a device tensor
            raise _same_device_error(_dev(common), torch.device("cpu"))

    # ---- device kwarg (new_empty, zeros_like(..., device=...), ...)
    target = common
    if ukw and "device" in ukw:
        dv = ukw["device"]
        if dv is not None:
            dv = torch.device(dv) if not isinstance(dv, torch.device) else dv
            ukw = dict(ukw)
            ukw["device"] = "cpu"
            if dv.type == "cpu":
                target = None
            elif dv.type == DEVICE_TYPE:
                target = dv.index if dv.index is not None else _CURRENT[0]
                _check_index(target)

    out = (impl or func)(*uargs, **ukw)
    if not _is_view(func):
        _launch(common, KERNEL_US, name if _recorders else None)
    if target is None:
        return out
    return _wrap_out(out, target, orig)


_MIXED_OK = {"_has_compatible_shallow_copy_type", "is_same_size", "set_"}


def _conv_check(args):
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    if x.device != w.device and x.device.type == "cpu" and x.dim() == 4:
        # CUDA (torch 2.11) routes a CPU input with a device weight to its slow conv2d kernel, which says so
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but got weight is on {w.device}, different from "
            f"other tensors on cpu (when checking argument in method wrapper_{DEVICE_TYPE.upper()}___slow_conv2d_forward)"
        )
    if x.device != w.device:
        tail = " or input should be a MKLDNN tensor and weight is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(
            f"Input type ({x.type()}) and weight type ({w.type()}) should be the same{tail}"
        )
    if isinstance(b, torch.Tensor) and b.device != x.device:
        tail = " or input should be a MKLDNN tensor and bias is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(
            f"Input type ({x.type()}) and bias type ({b.type()}) should be the same{tail}"
        )


# --------------------------------------------------------------------------
# special ops
# --------------------------------------------------------------------------
def _nbytes(t):
    return t.numel() * t.element_size()


def _copy_cost(nbytes, bw=COPY_BYTES_PER_US):
    return COPY_FIXED_US + nbytes / bw


def _op_copy_(func, args, kwargs):
    dst, src = args[0], args[1]
    non_blocking = bool(args[2]) if len(args) > 2 else bool(kwargs.get("non_blocking", False))
    dsim = type(dst) is SimTensor
    ssim = type(src) is SimTensor
    if dsim and ssim:
        if dst._idx == src._idx:
            dst._data.copy_(src._data)
            _launch(dst._idx, KERNEL_US, "copy_")
            return dst
        n = _nbytes(src)
        dst._data.copy_(src._data)
        _launch(src._idx, _copy_cost(n, D2D_BYTES_PER_US), "copy_")
        _clock.device[dst._idx] = max(_clock.device[dst._idx], _clock.device[src._idx])
        _note_copy("d2d", n, non_blocking, False, src.device, dst.device)
        return dst
    if dsim:  # host -> device
        if src.device.type != "cpu":
            raise RuntimeError(f"copy_ from {src.device} to {dst.device} is not supported by the simulator")
        pinned = _is_pinned_cpu(src)
        n = _nbytes(src)
        dst._data.copy_(src)
        _launch(dst._idx, _copy_cost(n), "copy_")
        _note_copy("h2d", n, non_blocking, pinned, src.device, dst.device)
        if not non_blocking:
            _sync("to_device_blocking", dst._idx)
        return dst
    # device -> host
    if dst.device.type != "cpu":
        raise RuntimeError(f"copy_ from {src.device} to {dst.device} is not supported by the simulator")
    pinned = _is_pinned_cpu(dst)
    n = _nbytes(src)
    _launch(src._idx, _copy_cost(n), "copy_")
    _note_copy("d2h", n, non_blocking, pinned, src.device, dst.device)
    if non_blocking and pinned:
        snap = src._data.detach().clone()
        _clock.pending.append((_clock.device[src._idx], src._idx, dst, snap))
        return dst
    _sync("to_cpu_blocking" if not non_blocking else "d2h_pageable", src._idx)
    dst.copy_(src._data)
    return dst


def _op_to_copy(func, args, kwargs):
    src = args[0]
    dv = kwargs.get("device")
    if dv is None:
        return _generic(func, args, kwargs)
    dv = torch.device(dv) if not isinstance(dv, torch.device) else dv
    non_blocking = bool(kwargs.get("non_blocking", False))
    dtype = kwargs.get("dtype") or src.dtype
    mf = kwargs.get("memory_format")
    if mf is None or mf is torch.preserve_format:
        mf = torch.preserve_format
    if dv.type == "cpu":
        pin = non_blocking or bool(kwargs.get("pin_memory"))
        data = src._data
        if pin:
            out = torch.zeros(data.shape, dtype=dtype) if mf is torch.preserve_format and data.is_contiguous() \
                else torch.zeros_like(data, dtype=dtype, memory_format=mf)
            _mark_pinned(out)
        else:
            out = torch.empty_like(data, dtype=dtype, memory_format=mf)
        _op_copy_(aten.copy_.default, (out, src, non_blocking), {})
        return out
    if dv.type == DEVICE_TYPE:
        idx = dv.index if dv.index is not None else _CURRENT[0]
        _check_index(idx)
        data = src._data.to(dtype=dtype, memory_format=mf, copy=True)
        if idx == src._idx:
            _launch(idx, KERNEL_US, "_to_copy")
            return SimTensor(data, idx)
        n = _nbytes(data)
        _launch(src._idx, _copy_cost(n, D2D_BYTES_PER_US), "_to_copy")
        _clock.device[idx] = max(_clock.device[idx], _clock.device[src._idx])
        _note_copy("d2d", n, non_blocking, False, src.device, dv)
        return SimTensor(data, idx)
    raise RuntimeError(f"simulated device cannot copy to {dv}")


def _op_local_scalar_dense(func, args, kwargs):
    t = args[0]
    _launch(t._idx, _copy_cost(t.element_size()), None)
    _sync("item", t._idx)
    return t._data.item()


def _op_index(func, args, kwargs):
    self = args[0]
    if type(self) is not SimTensor:
        idxs = args[1]
        for i in idxs:
            if isinstance(i, torch.Tensor) and i.device != self.device:
                raise RuntimeError(
                    "indices should be either on cpu or on the same device as the "
                    f"indexed tensor ({self.device})"
                )
    return _generic(func, args, kwargs)


def _op_is_pinned(func, args, kwargs):
    return False


def _op_equal(func, args, kwargs):
    res = _generic(func, args, kwargs)
    a = args[0]
    _sync("item", a._idx if type(a) is SimTensor else args[1]._idx)
    return res


def _op_nonzero(func, args, kwargs):
    # the output size depends on data: CUDA synchronizes here
    res = _generic(func, args, kwargs)
    _sync("nonzero", args[0]._idx)
    return res


def _op_set_(func, args, kwargs):
    raise NotImplementedError(
        f"{func} is not supported on the simulated device (storages are not simulated)"
    )


# --- CUDA-only fused RNN cells (the RNN code picks them for non-CPU inputs);
# reimplemented on the CPU data with the same math as aten/src/ATen/native/cuda/RNN.cu
def _lstm_cell_fwd(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    g = input_gates + hidden_gates
    if input_bias is not None:
        g = g + input_bias + hidden_bias
    i, f, c, o = g.chunk(4, 1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    cy = f * cx + i * c
    hy = o * cy.tanh()
    return hy, cy, torch.cat([i, f, c, o], 1)


def _lstm_cell_bwd(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    if grad_hy is None and grad_cy is None:
        return None, None, None
    i, f, c, o = workspace.chunk(4, 1)
    if grad_hy is None:
        grad_hy = torch.zeros_like(cy)
    if grad_cy is None:
        grad_cy = torch.zeros_like(cy)
    t = cy.tanh()
    gcx = grad_hy * o * (1 - t * t) + grad_cy
    gates = torch.cat([gcx * c * i * (1 - i), gcx * cx * f * (1 - f),
                       gcx * i * (1 - c * c), grad_hy * t * o * (1 - o)], 1)
    return gates, gcx * f, (gates.sum(0) if has_bias else None)


def _gru_cell_fwd(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    if input_bias is not None:
        input_gates = input_gates + input_bias
        hidden_gates = hidden_gates + hidden_bias
    ir, ii, in_ = input_gates.chunk(3, 1)
    hr, hi, hn = hidden_gates.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (ii + hi).sigmoid()
    n = (in_ + r * hn).tanh()
    hy = n + z * (hx - n)
    return hy, torch.cat([r, z, n, hx, hn], 1)


def _gru_cell_bwd(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = workspace.chunk(5, 1)
    gz = grad_hy * (hx - n) * (1 - z) * z
    ghx = grad_hy * z
    gn = grad_hy * (1 - z) * (1 - n * n)
    ghn = gn * r
    gr = gn * hn * (1 - r) * r
    gi = torch.cat([gr, gz, gn], 1)
    gh = torch.cat([gr, gz, ghn], 1)
    if has_bias:
        return gi, gh, ghx, gi.sum(0), gh.sum(0)
    return gi, gh, ghx, None, None


def _with_impl(impl):
    return lambda func, args, kwargs: _generic(func, args, kwargs, impl)


_SPECIAL = {
    aten._thnn_fused_lstm_cell.default: _with_impl(_lstm_cell_fwd),
    aten._thnn_fused_lstm_cell_backward_impl.default: _with_impl(_lstm_cell_bwd),
    aten._thnn_fused_gru_cell.default: _with_impl(_gru_cell_fwd),
    aten._thnn_fused_gru_cell_backward.default: _with_impl(_gru_cell_bwd),
    aten.copy_.default: _op_copy_,
    aten._to_copy.default: _op_to_copy,
    aten._local_scalar_dense.default: _op_local_scalar_dense,
    aten.index.Tensor: _op_index,
    aten.index_put_.default: _op_index,
    aten.index_put.default: _op_index,
    aten._index_put_impl_.default: _op_index,
    aten.is_pinned.default: _op_is_pinned,
    aten.equal.default: _op_equal,
    aten.nonzero.default: _op_nonzero,
    aten.masked_select.default: _op_nonzero,
}


# --------------------------------------------------------------------------
# factories (PrivateUse1 kernels)
# --------------------------------------------------------------------------
def _factory_idx(device):
    idx = _index(device)
    _check_index(idx)
    return idx


def _empty_memory_format(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    idx = _factory_idx(device)
    if _PROFILE == "mps" and dtype is torch.float64:
        raise TypeError(MPS_DOUBLE_MSG)
    data = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
    return SimTensor(data, idx)


def _empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    idx = _factory_idx(device)
    if _PROFILE == "mps" and dtype is torch.float64:
        raise TypeError(MPS_DOUBLE_MSG)
    data = torch.empty_strided(size, stride, dtype=dtype)
    return SimTensor(data, idx)


# --------------------------------------------------------------------------
# device module: torch.sim
# --------------------------------------------------------------------------
class Event:
    """Mirror of torch.cuda.Event on the virtual device clock."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._time = None
        self._idx = None

    def record(self, stream=None):
        idx = _CURRENT[0] if stream is None else getattr(stream, "_idx", _CURRENT[0])
        self._idx = idx
        c = _clock
        self._time = max(c.host, c.device[idx])

    def query(self):
        return self._time is None or _clock.host >= self._time

    def synchronize(self):
        if self._time is None:
            return
        if _clock.host < self._time:
            _clock.host = self._time
        _apply_pending()
        if _recorders:
            r = SyncRecord("event", f"{DEVICE_TYPE}:{self._idx}")
            for rec in _recorders:
                rec.syncs.append(r)

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError(
                f"{DEVICE_TYPE.upper()} error: device not ready "
                "(call synchronize() on the end event before elapsed_time())"
            )
        return (end_event._time - self._time) / 1000.0


class Stream:
    def __init__(self, device=None, priority=0):
        self._idx = _index(device)
        self.device = _dev(self._idx)

    def synchronize(self):
        _sync("synchronize", self._idx)

    def wait_stream(self, other):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self):
        return _clock.host >= _clock.device[self._idx]


class _DeviceModule:
    """Registered as ``torch.sim``; mirrors the torch.cuda functions a course needs."""

    Event = Event
    Stream = Stream

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def is_initialized():
        return True

    @staticmethod
    def _is_in_bad_fork():
        return False

    @staticmethod
    def _lazy_init():
        pass

    @staticmethod
    def device_count():
        return _COUNT

    @staticmethod
    def current_device():
        return _CURRENT[0]

    @staticmethod
    def set_device(device):
        idx = _index(device)
        _check_index(idx)
        _CURRENT[0] = idx

    @staticmethod
    def get_device_name(device=None):
        return f"Simulated accelerator ({_PROFILE} profile)"

    @staticmethod
    def manual_seed(seed):
        pass

    @staticmethod
    def manual_seed_all(seed):
        pass

    @staticmethod
    def seed_all():
        pass

    @staticmethod
    def synchronize(device=None):
        _sync("synchronize", None if device is None else _index(device))

    @staticmethod
    def current_stream(device=None):
        return Stream(device)

    @staticmethod
    def default_stream(device=None):
        return Stream(device)

    @staticmethod
    def memory_allocated(device=None):
        return _allocators[_index(device)].allocated

    @staticmethod
    def max_memory_allocated(device=None):
        return _allocators[_index(device)].peak

    @staticmethod
    def memory_reserved(device=None):
        return _allocators[_index(device)].reserved

    @staticmethod
    def max_memory_reserved(device=None):
        return _allocators[_index(device)].peak_reserved

    @staticmethod
    def reset_peak_memory_stats(device=None):
        a = _allocators[_index(device)]
        a.peak = a.allocated
        a.peak_reserved = a.reserved

    @staticmethod
    def empty_cache():
        for a in _allocators:
            a.empty_cache()

    @staticmethod
    def memory_stats(device=None):
        a = _allocators[_index(device)]
        return {
            "allocated_bytes.all.current": a.allocated,
            "allocated_bytes.all.peak": a.peak,
            "reserved_bytes.all.current": a.reserved,
            "reserved_bytes.all.peak": a.peak_reserved,
            "num_alloc_retries": 0,
            "allocation.all.allocated": a.n_alloc,
            "allocation.all.freed": a.n_free,
        }

    @staticmethod
    def host_time():
        return host_time()

    @staticmethod
    def device_time(device=None):
        return device_time(device)

    @staticmethod
    def get_rng_state(device="sim"):
        return torch.get_rng_state()

    @staticmethod
    def set_rng_state(new_state, device="sim"):
        torch.set_rng_state(new_state)


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self):
        return True

    def has_primary_context(self, dev_id):
        return True

    def is_built(self):
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1


_LIBS = []


def register(count: int, profile: str) -> None:
    """Process-wide, irreversible registration (called once by install)."""
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    configure(count, profile)
    _setup_privateuseone_for_python_backend(
        rename=DEVICE_TYPE, backend_module=_DeviceModule(), hook=_Hooks(), device_guard=_Guard()
    )
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", _empty_memory_format, "PrivateUse1")
    lib.impl("empty_strided", _empty_strided, "PrivateUse1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("is_pinned", _is_pinned_kernel, "CPU")
        lib.impl("_pin_memory", _pin_memory_kernel, "CompositeExplicitAutograd")
    _LIBS.append(lib)
    # Reached when the Python key is excluded: torch.tensor([sim_scalar, ...])
    # converts its items that way (via item(), like on CUDA).
    lib.impl("_local_scalar_dense", _local_scalar_dense_kernel, "PrivateUse1")
    # torch.tensor(data, device="sim") copies with the Python key excluded
    lib.impl("_copy_from", _copy_from_kernel, "PrivateUse1")
    lib.impl("_copy_from_and_resize", _copy_from_and_resize_kernel, "PrivateUse1")


def _copy_from_kernel(self, dst, non_blocking=False):
    return _op_copy_(aten.copy_.default, (dst, self, non_blocking), {})


def _copy_from_and_resize_kernel(self, dst):
    return _op_copy_(aten.copy_.default, (dst, self, False), {})


def _local_scalar_dense_kernel(t):
    return _op_local_scalar_dense(aten._local_scalar_dense.default, (t,), {})
