"""The wrapper tensor of the simulated device and its dispatch.

Every device tensor is a ``SimTensor``: a wrapper subclass (``torch.Tensor._make_wrapper_subclass``) whose
``device`` is ``sim:N`` and whose real data live in a CPU tensor (``_data``).  Autograd runs above the
wrapper (the AutogradPrivateUse1 key); every aten op below autograd reaches
``SimTensor.__torch_dispatch__``, which

1. unwraps the arguments and finds the op's device (placement.py decides what CUDA would refuse),
2. settles copies in flight that the op may read (clock.py),
3. gives random ops the device's generator (generators.py),
4. runs the op on the CPU data, books a launch on the virtual clock, and wraps the results, accounting
   each new storage in the device's caching allocator (allocator.py).

Factories (``torch.zeros(..., device="sim")``) reach the PrivateUse1 kernels of ``aten::empty*`` registered
in registration.py; ``zeros``/``randn``/``arange`` are composites built on them.
"""

from __future__ import annotations

import collections
import copy
import sys

import torch

from . import asserts, config, generators, hook_errors, placement, races, recorded_mixes, script_errors
from . import storage as _storage
from . import limits as _limits
from .clock import apply_pending, clock, copy_cost, launch, queue_h2d, reason, settle_h2d, stream_end, sync
from .config import DEVICE_TYPE, dev
from .instruments import note_copy
from .instruments import recorders as _recorders
from .pinned import cannot_pin, is_pinned_cpu, mark_pinned
from .device_memory import (_alloc, _live, _storage_ref, _StorageRef, allocators, reset_allocators, resize_storage,
                            storage_to_host)
from .rnn import FUSED_RNN

aten = torch.ops.aten

_make_wrapper = torch.Tensor._make_wrapper_subclass


def _new_sparse(cls, data, idx):
    """A sparse COO tensor of the device: a wrapper of that layout (no strides, no storage of its own) whose
    indices and values each hold a block of the device's memory, as CUDA allocates them."""
    if data.layout is not torch.sparse_coo:
        raise NotImplementedError(
            f"the simulated device has sparse COO tensors only, not {str(data.layout).replace('torch.', '')}: "
            + _limits.LIMITS["sparse_layouts"].what)
    r = _make_wrapper(cls, data.size(), dtype=data.dtype, layout=data.layout, device=dev(idx), requires_grad=False)
    r._data = data
    r._idx = idx
    r._mem = (_storage_ref(data._indices(), idx), _storage_ref(data._values(), idx))
    return r


class SimTensor(torch.Tensor):
    """A tensor on the simulated device; real data in ``self._data`` (CPU)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, data, idx, block=False, ref=None):
        if data.layout is not torch.strided:
            return _new_sparse(cls, data, idx)
        r = _make_wrapper(
            cls,
            data.size(),
            strides=data.stride(),
            storage_offset=data.storage_offset(),
            dtype=data.dtype,
            layout=data.layout,
            device=dev(idx),
            requires_grad=False,
        )
        r._data = data
        r._idx = idx
        if data.is_conj():  # a conjugate or negative view (x.conj()): the wrapper is one too, as C++ decides by it
            torch._C._set_conj(r, True)
        if data.is_neg():
            torch._C._set_neg(r, True)
        # A view of a tensor of this device: same storage, same block. (A sparse base holds two refs, indices
        # and values: a view of either finds its own below, by its storage.)
        if ref is not None and type(ref) is _StorageRef:
            r._mem = ref
            return r
        r._mem = _storage_ref(data, idx, block)
        return r

    def __init__(self, data, idx, block=False, ref=None):
        pass

    def record_stream(self, stream):
        """As CUDA's: the block of this tensor's storage is not reused until ``stream``'s work queued by the time
        the tensor is freed has ended (races.py)."""
        from .streams import SimStream

        if not isinstance(stream, SimStream):
            raise TypeError(f"record_stream(): expected a stream of the {DEVICE_TYPE} device, got {stream!r}")
        if type(self._mem) is _StorageRef:
            races.record_stream(self._mem, stream)
        return torch.Tensor.record_stream(self, stream)

    # --- host reads of device values: sync points, recorded as host reads ----------------------
    def __repr__(self, *, tensor_contents=None):
        with reason("print/repr", "print", self._idx):  # printing reads the values: a host read, as on CUDA
            sync("print/repr", self._idx)
            s = torch._tensor_str._str(self, tensor_contents=tensor_contents)
        if s.startswith("Parameter(") and s.endswith(")"):
            # _tensor_str wraps subclass parameters as Parameter(...): print as CUDA prints a Parameter
            s = s[len("Parameter("):-1].replace("\n" + " " * len("Parameter("), "\n")
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
        with reason("item", "item", self._idx):
            return super().item()

    def tolist(self):
        with reason("tolist", "tolist", self._idx):
            return self.detach().cpu().tolist()

    def __bool__(self):
        with reason("bool", "bool", self._idx):
            return super().__bool__()

    def __float__(self):
        with reason("item", "float", self._idx):
            return super().__float__()

    def __int__(self):
        with reason("item", "int", self._idx):
            return super().__int__()

    def __index__(self):
        with reason("item", "index", self._idx):
            return super().__index__()

    def data_ptr(self):
        # As on CUDA, the address of the first element in the device's allocator (storage.py): shared by a view
        # that starts there and by to(same device), new for a copy, 512-byte aligned, reused once freed.
        if type(self._mem) is not _StorageRef:
            return self._data.data_ptr()  # sparse: torch's own refusal
        return _storage.tensor_address(self)

    def untyped_storage(self):
        # The wrapper's storage has no data and spans this view only; CUDA's is the whole block (storage.py)
        st = torch.Tensor.untyped_storage(self)
        if type(self._mem) is not _StorageRef:
            return st
        return _storage.of(self, st)

    def __deepcopy__(self, memo):
        if not self.is_leaf or id(self) in memo:
            return super().__deepcopy__(memo)  # torch's refusal of a non-leaf, or the copy already made
        if getattr(self, "_is_param", False):
            # A device parameter is an nn.Parameter on CUDA, whose deep copy is a new parameter of the same
            # data and no more (no .grad); here it is a SimTensor marked as a parameter.
            new = torch.nn.Parameter(self.data.clone(memory_format=torch.preserve_format), self.requires_grad)
            memo[id(self)] = new
            return new
        # As torch copies a tensor (clone, requires_grad, grad, Python attributes), except that torch's own way
        # for a wrapper subclass deep-copies its whole __dict__ over the clone's: the copy would hold this
        # tensor's allocator block, freed twice.
        with torch.no_grad():
            new = self.clone()
        memo[id(self)] = new
        if self.requires_grad:
            new.requires_grad_()
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        for key, value in self.__dict__.items():
            if key not in ("_data", "_idx", "_mem"):
                setattr(new, key, copy.deepcopy(value, memo))
        return new

    def numpy(self, *, force=False):
        if force:
            # as torch's tensor_to_numpy(force=True): detach, copy to the host (a blocking d2h copy, recorded
            # as such), resolve conj/neg bits
            return self.detach().cpu().resolve_conj().resolve_neg().numpy()
        raise TypeError(
            f"can't convert {self.device} device type tensor to numpy. Use "
            "Tensor.cpu() to copy the tensor to host memory first."
        )

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __reduce_ex__(self, proto):
        # The format torch uses for storage-less PrivateUse1 tensors: a CPU copy plus the device string;
        # torch.load honours map_location (serialization.py words the error where sim is missing). A
        # parameter is saved as nn.Parameter saves one, so that it loads as a parameter.
        if getattr(self, "_is_param", False):
            return torch._utils._rebuild_parameter, (self.data, self.requires_grad, collections.OrderedDict())
        from .serialization import host_view

        # torch.save keeps a view's offset and strides and writes a storage once (serialization.py)
        data = host_view(self) if type(self._mem) is _StorageRef else self.detach().cpu()
        return (
            torch._utils._rebuild_device_tensor_from_cpu_tensor,
            (data, self.dtype, str(self.device), self.requires_grad),
        )

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        try:
            if asserts.broken:
                asserts.check(_device_index(args, kwargs))
            info = _INFO.get(id(func))
            if info is None:
                info = _op_info(func)
            h = info[0]
            if h is not None:
                return h(func, args, kwargs or {})
            if info[1] and not kwargs:
                # fast path for views (about half of the ops autograd and attention code issue): one device
                # tensor, no other tensor argument, no launch, the base's storage and block
                a0 = args[0]
                if type(a0) is SimTensor:
                    for a in args[1:]:
                        if isinstance(a, (torch.Tensor, list, tuple)) and _has_tensor(a):
                            break
                    else:
                        out = func(a0._data, *args[1:])
                        if _inference_mode_enabled() != a0.is_inference():
                            return _views_in_base_mode(out, a0)
                        if type(out) is torch.Tensor:
                            return SimTensor(out, a0._idx, False, a0._mem)
                        if isinstance(out, (list, tuple)):
                            return type(out)(SimTensor(o, a0._idx, False, a0._mem) for o in out)
                        return out
            return generic(func, args, kwargs or {})
        except BaseException as e:
            # On CUDA a failing op leaves nothing behind once its C++ exception has unwound.  Here the
            # traceback keeps the simulator's frames, whose locals hold the op's tensors (e.g. the view
            # weight.t() of a failed Linear forward, which holds its base weight): a later model.cpu() would
            # then fail to swap the parameter ("_apply(): Couldn't swap Linear.weight") while the learner's
            # code still holds the exception.  Drop this frame's tensors and clear the frames below.
            args = kwargs = types = a0 = a = out = None  # noqa: F841
            _clear_frames(e.__traceback__)
            script_errors.remember(e)
            if hook_errors.raised_under_the_engine(sys._getframe()):
                return hook_errors.defer(e)  # raising here would end the process (hook_errors.py)
            raise


def _device_index(args, kwargs):
    """The index of the first simulated tensor among an op's arguments (None if there is none)."""
    for a in (*args, *(kwargs or {}).values()):
        if type(a) is SimTensor:
            return a._idx
        if isinstance(a, (list, tuple)):
            for b in a:
                if type(b) is SimTensor:
                    return b._idx
    return None


def _clear_frames(tb):
    while tb is not None:
        try:
            tb.tb_frame.clear()
        except RuntimeError:  # a frame still running (this one)
            pass
        tb = tb.tb_next


_inference_mode_enabled = torch._C.is_inference_mode_enabled


def _views_in_base_mode(out, base):
    """Wrap the view results ``out`` of ``base`` as inference tensors exactly when ``base`` is one (as a CPU
    or CUDA view is, whatever the current mode): a wrapper made inside inference_mode is an inference
    tensor, and autograd then refuses to share the version counter of a normal base with it ("Cannot set
    version_counter for inference tensor"); a view of an inference tensor made outside would be normal."""
    with torch._C._InferenceMode(base.is_inference()):
        if type(out) is torch.Tensor:
            return SimTensor(out, base._idx, False, base._mem)
        if isinstance(out, (list, tuple)):
            return type(out)(SimTensor(o, base._idx, False, base._mem) if type(o) is torch.Tensor else o
                             for o in out)
        return out


_META_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)
_set_storage = aten.set_.source_Storage_storage_offset


def _fix_meta(w):
    """An in-place/out= op changed the metadata of the CPU data (resize_, transpose_, ...): mirror
    sizes/strides onto the wrapper."""
    d = w._data
    if d.layout is not torch.strided:
        return
    if d.shape != w.shape or d.stride() != w.stride() or d.storage_offset() != w.storage_offset():
        _set_storage.redispatch(_META_KS, w, torch.Tensor.untyped_storage(w), d.storage_offset(), d.size(), d.stride())
        st = d.untyped_storage()
        blk = w._mem.block
        if st.data_ptr() != w._mem.key or st.nbytes() != 0 and (blk is None or blk.size < st.nbytes()):
            # storage replaced or grown: account as a fresh allocation
            ref = _StorageRef(st.data_ptr(), _alloc(w._idx, st.nbytes()), w._idx)
            if ref.key:
                _live[ref.key] = ref
            w._mem = ref


def _wrap_out(out, idx, orig, ref=None):
    if isinstance(out, torch.Tensor):
        w = orig.get(id(out))
        if w is not None:
            _fix_meta(w)
            return w
        if type(out) is SimTensor:
            return out
        return SimTensor(out, idx, False, ref)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_out(o, idx, orig, ref) for o in out)
    return out


# id(op) -> (special handler or None, is_view, name, generator argument info).  Keyed by id: OpOverloads
# are singletons, and their __hash__ is Python code (several lookups per op would cost microseconds).
_INFO: dict = {}
_KEEP: list = []  # the ops of _INFO, so that their ids stay theirs


def _op_info(func):
    name = func._opname if hasattr(func, "_opname") else func.__name__.split(".")[0]
    is_view = bool(func.is_view) or name in (
        "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "_unsafe_view", "detach", "alias", "lift_fresh",
    )
    info = (SPECIAL.get(func), is_view, name, generators.gen_arg(func))
    _KEEP.append(func)
    _INFO[id(func)] = info
    return info


def _has_meta(args, kwargs) -> bool:
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, torch.Tensor):
            if a.device.type == "meta":
                return True
        elif isinstance(a, (list, tuple)) and any(isinstance(b, torch.Tensor) and b.device.type == "meta" for b in a):
            return True
    return False


def _has_tensor(a):
    if isinstance(a, torch.Tensor):
        return True
    return any(isinstance(b, torch.Tensor) for b in a)


def _is_list_of_tensors(a):
    return a and (isinstance(a[0], torch.Tensor) or a[0] is None or (len(a) > 1 and isinstance(a[-1], torch.Tensor)))


def generic(func, args, kwargs, impl=None):
    # ---- unwrap, find common device, check placement (TensorIterator rules)
    common = -1
    bad = None
    orig = {}
    uargs = []
    cpu_nonscalar = cpu_scalar = False  # a CPU tensor met the device's: one that is not 0-dim, one that is
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
                else:
                    cpu_scalar = True
                uargs.append(a)
        elif isinstance(a, (list, tuple)) and _is_list_of_tensors(a):
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
                    if isinstance(b, torch.Tensor):
                        if b.dim() != 0 or b.device.type != "cpu":
                            cpu_nonscalar = True
                        else:
                            cpu_scalar = True
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
                if isinstance(v, torch.Tensor):
                    if v.dim() != 0 or v.device.type != "cpu":
                        cpu_nonscalar = True
                    else:
                        cpu_scalar = True
                ukw[k] = v
    else:
        ukw = kwargs

    info = _INFO.get(id(func)) or _op_info(func)
    name = info[2]
    if cpu_nonscalar and _has_meta(args, kwargs):
        # Meta is the highest backend of the dispatcher: given a meta tensor, CUDA runs the op's meta kernel,
        # which checks no device or refuses in its own words ("Tensor on device meta is not on the expected
        # device cuda:0!"), and makes outputs of the device of the input it takes them from (F.linear with a meta
        # weight gives a device tensor of no values)
        return func.redispatch(_META_KS, *args, **(kwargs or {}))
    if bad is None and (cpu_nonscalar or cpu_scalar) and common >= 0:
        recorded_mixes.check(func, args, kwargs, dev(common))  # what CUDA said to this op and these CPU tensors
    if bad is not None or cpu_nonscalar:
        placement.check_mixed(func, name, args, kwargs, dev(common), None if bad is None else dev(bad))
    elif cpu_scalar:
        placement.check_cpu_scalars(func, args, kwargs, dev(common))
    if name in placement.CUDA_DTYPE_KERNELS and config.PROFILE == "cuda":
        placement.check_cuda_dtypes(name, args)

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
                target = dv.index if dv.index is not None else config.CURRENT[0]
                config.check_index(target)

    if clock.pending_h2d:
        settle_h2d()  # copies queued before this op run first (stream order)
    gi = info[3]
    if gi is not None:
        uargs, ukw = generators.fix_generator(gi, uargs, ukw, common)

    try:
        out = (impl or func)(*uargs, **ukw)
    except (IndexError, RuntimeError) as exc:
        if target is None or not asserts.is_kernel_assert(exc):
            reworded = placement.cuda_wording(exc) if target is not None and config.PROFILE == "cuda" else None
            if reworded is not None:
                raise reworded from None
            raise
        out = asserts.trigger(target, exc, impl or func, uargs, ukw)  # CUDA's kernel asserts instead
        if out is None:
            out = uargs[0]
    ref = None
    if info[1]:
        a0 = args[0] if args else None
        if type(a0) is SimTensor and target == a0._idx:
            ref = a0._mem  # views share the storage (and allocator block) of their base
            if _inference_mode_enabled() != a0.is_inference():
                with torch._C._InferenceMode(a0.is_inference()):
                    return _wrap_out(out, target, orig, ref)
    else:
        launch(common, None, name if _recorders else None)
    if target is None:
        return out
    res = _wrap_out(out, target, orig, ref)
    if clock.side and ref is None and common >= 0:
        races.op(common, stream_end(common), list(orig.values()), _sim_tensors(res))
    return res


def _sim_tensors(res):
    if type(res) is SimTensor:
        return [res]
    if isinstance(res, (list, tuple)):
        return [r for r in res if type(r) is SimTensor]
    return []


# --------------------------------------------------------------------------
# special ops
# --------------------------------------------------------------------------
def _nbytes(t):
    return t.numel() * t.element_size()


def op_copy_(func, args, kwargs):
    dst, src = args[0], args[1]
    non_blocking = bool(args[2]) if len(args) > 2 else bool(kwargs.get("non_blocking", False))
    dsim = type(dst) is SimTensor
    ssim = type(src) is SimTensor
    if clock.pending_h2d:
        settle_h2d()
    if dsim and ssim:
        if config.BAD_FORK[0]:
            raise config.bad_fork_error()
        if dst._idx == src._idx:
            dst._data.copy_(src._data)
            launch(dst._idx, None, "copy_")
            if clock.side:
                races.op(dst._idx, stream_end(dst._idx), [src], [dst])
            return dst
        n = _nbytes(src)
        dst._data.copy_(src._data)
        launch(src._idx, copy_cost(n, config.D2D_BYTES_PER_US), "copy_")
        clock.device[dst._idx] = max(clock.device[dst._idx], clock.device[src._idx])
        note_copy("d2d", n, non_blocking, False, src.device, dst.device)
        return dst
    if dsim:  # host -> device
        if config.BAD_FORK[0]:
            raise config.bad_fork_error()
        if src.device.type == "meta":  # CUDA's words, which Module.to rewords ("use to_empty()")
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if src.device.type != "cpu":
            raise RuntimeError(f"copy_ from {src.device} to {dst.device} is not supported by the simulator")
        if src.dtype != dst.dtype:
            return _converting_h2d(dst, src, non_blocking)
        # copy_kernel_cuda copies from the pinned source itself only where it needs no temporary of it: a
        # source of another layout (a column slice) is first made contiguous in pageable memory
        pinned = is_pinned_cpu(src) and src.shape == dst.shape and (src.is_contiguous()
                                                                    or _same_dense_layout(src, dst._data))
        n = _nbytes(src)
        launch(dst._idx, copy_cost(n), "copy_")
        if clock.side:
            races.op(dst._idx, stream_end(dst._idx), [], [dst])
        note_copy("h2d", n, non_blocking, pinned, src.device, dst.device)
        if non_blocking and pinned:
            # the device reads the pinned source when it runs the copy (clock.py)
            queue_h2d(dst._idx, dst._data, src)
            return dst
        dst._data.copy_(src)  # pageable memory is staged before copy_ returns
        if not non_blocking:
            sync("to_device_blocking", dst._idx)
        return dst
    # device -> host
    if dst.device.type == "meta":
        # copy_impl: into a meta tensor nothing is copied (load_state_dict into a model built on meta warns so)
        torch.empty(dst.shape, device="meta").copy_(torch.empty(src.shape, device="meta"))  # its shape check
        return dst
    if dst.device.type != "cpu":
        raise RuntimeError(f"copy_ from {src.device} to {dst.device} is not supported by the simulator")
    if src.dtype != dst.dtype and (non_blocking or config.PROFILE == "mps"):
        # CUDA converts on the device first when non_blocking (copy_kernel_cuda), into device memory of the
        # destination dtype: the converted bytes cross. Blocking, it converts on the CPU after the source bytes
        # crossed (below). MPS casts into the host's destination: the destination dtype, either way.
        src = src.to(dst.dtype)
    # copy_kernel_cuda copies into the pinned destination itself only where it needs no temporary of it: into a
    # destination of another layout (a transposed buffer, a column slice) it copies through a contiguous
    # pageable temporary, which cudaMemcpyAsync fills before it returns
    pinned = is_pinned_cpu(dst) and (dst.is_contiguous() or _same_dense_layout(src._data, dst))
    n = _nbytes(src)
    launch(src._idx, copy_cost(n), "copy_")
    stale = clock.side and races.op(src._idx, stream_end(src._idx), [src], [])
    note_copy("d2h", n, non_blocking, pinned, src.device, dst.device)
    if non_blocking and pinned:
        snap = src._data.detach().clone()
        if stale:
            races.poison(snap)
        clock.pending.append((stream_end(src._idx), src._idx, dst, snap))
        _unlanded(dst)
        return dst
    sync("to_cpu_blocking" if not non_blocking else "d2h_pageable", src._idx)
    dst.copy_(src._data)
    if stale:
        races.poison(dst)
    return dst


def _converting_h2d(dst, src, non_blocking):
    """A copy to the device that changes the dtype, made as CUDA's copy_kernel_cuda makes it. With non_blocking the
    conversion runs on the device: the source dtype crosses (from pinned memory, asynchronously, if the source is
    pinned) into device memory of that dtype, converted into `dst` after the copy, so the device holds both at
    once (a 64 MiB float32 tensor to float16: 96 MiB at the peak on an H100, 32 MiB blocking). Blocking, the CPU
    converts first and the converted bytes cross, as MPS does either way."""
    src = src.expand(dst.shape)
    if not non_blocking or config.PROFILE == "mps":  # copy_to_mps_ converts on the CPU, blocking or not
        dst.copy_(src.to(dst.dtype).contiguous(), non_blocking=non_blocking)
        return dst
    staged = torch.empty(dst.shape, dtype=src.dtype, device=dst.device)
    staged.copy_(src.contiguous(), non_blocking=True)
    dst.copy_(staged)
    return dst


def _unlanded(dst):
    """What the host finds in the destination of a copy still in flight. On CUDA it is whatever the memory held
    (a fresh pinned buffer's leftovers, a reused one's old values), which on an unlucky draw equals the right
    answer; here it is a value no result has (NaN, or the integer type's far end), so that a read before the
    copy lands is always seen as wrong. bool has no such value and keeps its contents."""
    races.poison(dst)


def _same_dense_layout(a, b):
    """Whether a copy between `a` and `b` is one block of memory on both sides (TensorIterator's is_contiguous):
    same shape, both dense without overlap, the same strides wherever a dimension has more than one element."""
    if a.shape != b.shape:
        return False
    if not (_dense(a) and _dense(b)):
        return False
    return all(sa == sb for n, sa, sb in zip(a.shape, a.stride(), b.stride()) if n != 1)


def _dense(t):
    """Non-overlapping and dense: contiguous once its dimensions are ordered by stride."""
    return t.is_contiguous() or t.permute(sorted(range(t.dim()), key=lambda d: -t.stride(d))).is_contiguous()


def op_to_copy(func, args, kwargs):
    src = args[0]
    dv = kwargs.get("device")
    if dv is None:
        return generic(func, args, kwargs)
    dv = torch.device(dv) if not isinstance(dv, torch.device) else dv
    non_blocking = bool(kwargs.get("non_blocking", False))
    dtype = kwargs.get("dtype") or src.dtype
    mf = kwargs.get("memory_format")
    if mf is None or mf is torch.preserve_format:
        mf = torch.preserve_format
    if clock.pending_h2d:
        settle_h2d()
    if dv.type == "cpu":
        pin = non_blocking or bool(kwargs.get("pin_memory"))
        data = src._data
        if pin:
            out = torch.zeros(data.shape, dtype=dtype) if mf is torch.preserve_format and data.is_contiguous() \
                else torch.zeros_like(data, dtype=dtype, memory_format=mf)
            mark_pinned(out)
        elif data.layout is not torch.strided:  # sparse: no memory format
            out = torch.empty_like(data, dtype=dtype)
        else:
            out = torch.empty_like(data, dtype=dtype, memory_format=mf)
        op_copy_(aten.copy_.default, (out, src, non_blocking), {})
        return out
    if dv.type == "meta":  # a meta tensor of the same sizes and strides, as _to_copy gives on CUDA
        return src._data.to(device="meta", dtype=dtype, memory_format=mf)
    if dv.type == DEVICE_TYPE:
        if config.BAD_FORK[0]:
            raise config.bad_fork_error()
        idx = dv.index if dv.index is not None else config.CURRENT[0]
        config.check_index(idx)
        data = src._data.to(dtype=dtype, memory_format=mf, copy=True) if src.layout is torch.strided \
            else src._data.to(dtype=dtype, copy=True)
        if idx == src._idx:
            launch(idx, None, "_to_copy")
            out = SimTensor(data, idx)
            if clock.side:
                races.op(idx, stream_end(idx), [src], [out])
            return out
        n = _nbytes(data)
        launch(src._idx, copy_cost(n, config.D2D_BYTES_PER_US), "_to_copy")
        clock.device[idx] = max(clock.device[idx], clock.device[src._idx])
        note_copy("d2d", n, non_blocking, False, src.device, dv)
        return SimTensor(data, idx)
    raise RuntimeError(f"simulated device cannot copy to {dv}")


def op_local_scalar_dense(func, args, kwargs):
    t = args[0]
    with reason("item", "item", t._idx):
        if clock.pending_h2d:
            settle_h2d()
        launch(t._idx, copy_cost(t.element_size()), None)
        stale = clock.side and races.op(t._idx, stream_end(t._idx), [t], [])
        sync("item", t._idx)
        if stale:
            value = t._data.detach().clone().reshape(())
            races.poison(value)
            return value.item()
        return t._data.item()


def op_index(func, args, kwargs):
    self = args[0]
    if type(self) is not SimTensor:
        if func is not aten.index.Tensor:
            # a write through indices into a CPU tensor moves them to it first (a copy, and a wait for the
            # device), as CUDA does; only a read refuses them
            indices = [i.to("cpu") if isinstance(i, torch.Tensor) else i for i in args[1]]
            values = args[2] if len(args) > 2 else None
            if type(values) is SimTensor and values.dim() != 0:  # TensorIterator meets them on the CPU
                raise placement.same_device_error(values.device, self.device)
            if not any(type(a) is SimTensor for a in args[2:]):
                return func(self, indices, *args[2:], **kwargs)  # all on the CPU now
            args = (self, indices, *args[2:])
        for i in args[1]:
            if isinstance(i, torch.Tensor) and i.device != self.device:
                raise placement.index_into_cpu_error(self.device)
        return generic(func, args, kwargs)
    res = generic(func, args, kwargs)
    for i in args[1]:
        if isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8):
            # a boolean mask becomes indices through nonzero: CUDA synchronizes there
            sync("nonzero", self._idx)
            break
    return res


def op_fill_tensor(func, args, kwargs):
    # fill_ with a 0-dim value on another device reads it on the host (value.item()) and fills with that
    self, value = args[0], args[1]
    if isinstance(value, torch.Tensor) and value.dim() == 0 and value.device != self.device:
        return aten.fill_.Scalar(self, value.item())
    return generic(func, args, kwargs)


def op_bernoulli_tensor(func, args, kwargs):
    # CUDA's kernel copies the probabilities to the device itself (bernoulli_tensor_cuda_kernel): a CPU p is fine
    self, p = args[0], args[1]
    if type(self) is SimTensor and isinstance(p, torch.Tensor) and p.device.type == "cpu":
        args = (self, p.to(self.device), *args[2:])
    return generic(func, args, kwargs)


def op_is_pinned(func, args, kwargs):
    return False


def op_pin_memory(func, args, kwargs):
    raise cannot_pin(args[0])


def op_equal(func, args, kwargs):
    res = generic(func, args, kwargs)
    a = args[0]
    sync("item", a._idx if type(a) is SimTensor else args[1]._idx)
    return res


def op_nonzero(func, args, kwargs):
    # the output size depends on data: CUDA synchronizes here
    res = generic(func, args, kwargs)
    sync(func.__name__.split(".")[0], args[0]._idx)
    return res


def op_pack_padded_sequence(func, args, kwargs):
    """aten._pack_padded_sequence(input, lengths, batch_first): as on CUDA, the lengths must be a CPU tensor, and
    the packed data stay on the input's device while their batch_sizes are a CPU tensor."""
    inp, lengths = args[0], args[1]
    if type(lengths) is SimTensor:
        kind = {torch.int64: "Long", torch.int32: "Int", torch.float32: "Float"}.get(lengths.dtype, lengths.dtype)
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device} {kind} tensor")
    return _packed_on_device(func, inp, args, kwargs)


def op_with_cpu_batch_sizes(func, args, kwargs):
    """_pad_packed_sequence(data, batch_sizes, ...) and _pack_padded_sequence_backward(grad, sizes, batch_sizes,
    ...): device data with the CPU batch_sizes of a PackedSequence, which CUDA's kernels read on the host."""
    sizes = next((a for a in args[1:] if isinstance(a, torch.Tensor)), None)
    if type(args[0]) is not SimTensor or type(sizes) is SimTensor:
        return generic(func, args, kwargs)
    return _packed_on_device(func, args[0], args, kwargs)


def _packed_on_device(func, dev_tensor, args, kwargs):
    out = func(dev_tensor._data, *args[1:], **kwargs)
    launch(dev_tensor._idx, None, func.__name__.split(".")[0])
    if isinstance(out, tuple):  # (on the device, a CPU tensor of sizes)
        return (SimTensor(out[0], dev_tensor._idx), *out[1:])
    return SimTensor(out, dev_tensor._idx)


def _with_impl(impl):
    return lambda func, args, kwargs: generic(func, args, kwargs, impl)


def _rrelu_half(x, noise, *rest, **kw):
    """rrelu_with_noise of float16 data: CUDA has the kernel (recorded), the CPU has not; computed in float32."""
    if x.dtype is not torch.float16 or config.PROFILE != "cuda":
        return aten.rrelu_with_noise.default(x, noise, *rest, **kw)
    wide = noise.float()
    out = aten.rrelu_with_noise.default(x.float(), wide, *rest, **kw)
    noise.copy_(wide)
    return out.half()


SPECIAL = {
    **{getattr(aten, op).default: _with_impl(fn) for op, fn in FUSED_RNN.items()},
    aten.copy_.default: op_copy_,
    aten._to_copy.default: op_to_copy,
    aten._local_scalar_dense.default: op_local_scalar_dense,
    aten.index.Tensor: op_index,
    aten.index_put_.default: op_index,
    aten.index_put.default: op_index,
    aten._index_put_impl_.default: op_index,
    aten.fill_.Tensor: op_fill_tensor,
    aten.bernoulli_.Tensor: op_bernoulli_tensor,
    aten.is_pinned.default: op_is_pinned,
    aten._pin_memory.default: op_pin_memory,
    aten.equal.default: op_equal,
    aten.nonzero.default: op_nonzero,
    aten.masked_select.default: op_nonzero,
    aten._pack_padded_sequence.default: op_pack_padded_sequence,
    aten._pad_packed_sequence.default: op_with_cpu_batch_sizes,
    aten._pack_padded_sequence_backward.default: op_with_cpu_batch_sizes,
    aten.rrelu_with_noise.default: _with_impl(_rrelu_half),
}


def op_without_a_device_kernel(func, args, kwargs):
    """An op CUDA has no kernel for (torch.histogram): the dispatcher's own NotImplementedError, which names this
    device's backend and lists the ones the op has, as CUDA's does."""
    func.redispatch(torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1), *args, **kwargs)
    raise NotImplementedError(f"Could not run '{func._schema.name}' with arguments from the '{DEVICE_TYPE}' backend.")


def op_record_stream(func, args, kwargs):
    # The dispatcher hands a plain torch.Stream, without the simulator's stream id: SimTensor.record_stream
    # records the stream itself before this is reached
    return None


def _aten_op(name: str):
    packet, _, overload = name.partition(".")
    try:
        return getattr(getattr(aten, packet), overload or "default")
    except (AttributeError, RuntimeError):  # an operator of another torch version
        return None


SPECIAL[aten.record_stream.default] = op_record_stream
for _name in placement.ops_without_a_cuda_kernel():
    if (_op := _aten_op(_name)) is not None:
        SPECIAL.setdefault(_op, op_without_a_device_kernel)


# --------------------------------------------------------------------------
# factories (PrivateUse1 kernels)
# --------------------------------------------------------------------------
def _factory_idx(device):
    if config.BAD_FORK[0]:
        raise config.bad_fork_error()
    config.INITIALIZED[0] = True
    idx = config.index(device)
    config.check_index(idx)
    return idx


def _reserve(idx, size, dtype):
    """Allocate on the virtual device before the CPU data exist, so that an out-of-memory request fails
    like on CUDA instead of exhausting the host."""
    dtype = dtype or torch.get_default_dtype()
    if config.PROFILE == "mps" and dtype is torch.float64:
        raise TypeError(config.MPS_DOUBLE_MSG)
    n = 1
    for s in size:
        n *= int(s)
    itemsize = torch.empty((), dtype=dtype).element_size() if dtype not in _ITEMSIZE else _ITEMSIZE[dtype]
    return _alloc(idx, n * itemsize)


_ITEMSIZE = {torch.float32: 4, torch.float64: 8, torch.float16: 2, torch.bfloat16: 2, torch.int64: 8,
             torch.int32: 4, torch.int16: 2, torch.int8: 1, torch.uint8: 1, torch.bool: 1}


def empty_memory_format(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    idx = _factory_idx(device)
    block = _reserve(idx, size, dtype)
    data = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
    return SimTensor(data, idx, block)


def efficientzerotensor(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    # Autograd's zero gradients (sgn, ...): CUDA's takes no device memory (ZeroTensorAllocator), so no block here
    return SimTensor(torch.zeros(size, dtype=dtype), _factory_idx(device), None)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    idx = _factory_idx(device)
    if config.PROFILE == "mps" and dtype is torch.float64:
        raise TypeError(config.MPS_DOUBLE_MSG)
    data = torch.empty_strided(size, stride, dtype=dtype)
    return SimTensor(data, idx)


def computed_factory(op):
    """A factory whose CUDA kernel computes its values on the device (triu_indices, kaiser_window): the values
    are computed on the CPU, then placed, as empty's are."""
    def kernel(*args, device=None, pin_memory=None, **kwargs):
        idx = _factory_idx(device)
        data = op(*args, **kwargs)
        return SimTensor(data, idx, _reserve(idx, data.shape, data.dtype))
    return kernel


COMPUTED_FACTORIES = (aten.triu_indices.default, aten.tril_indices.default, aten.kaiser_window.default,
                      aten.kaiser_window.periodic, aten.kaiser_window.beta)


def copy_from_kernel(self, dst, non_blocking=False):
    return op_copy_(aten.copy_.default, (dst, self, non_blocking), {})


def copy_from_and_resize_kernel(self, dst):
    return op_copy_(aten.copy_.default, (dst, self, False), {})


def local_scalar_dense_kernel(t):
    return op_local_scalar_dense(aten._local_scalar_dense.default, (t,), {})


# Python names a tensor's type in its own messages ("type Tensor doesn't define __round__ method", "'Tensor'
# object has no attribute ..."), and learners print type(x): a simulated tensor reads as CUDA's does.
SimTensor.__name__ = SimTensor.__qualname__ = "Tensor"
SimTensor.__module__ = "torch"

__all__ = ["SimTensor", "allocators", "reset_allocators", "apply_pending"]
