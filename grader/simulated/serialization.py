"""Checkpoints of sim tensors, and loading them where the simulator is missing.

A sim tensor pickles as torch pickles storage-less PrivateUse1 tensors:
``torch._utils._rebuild_device_tensor_from_cpu_tensor(cpu_copy, dtype, "sim:0", requires_grad)``, which
torch.load (also with ``weights_only=True``) allows and which honours ``map_location``.

Where sim is not installed, torch's own code would fail inside ``torch.device("sim:0")`` ("Expected one of
cpu, cuda, ... device type at start of device string: sim"), while a CUDA checkpoint on a CPU-only
machine says "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
...".  ``install_load_hook()`` -- run when ``grader.simulated`` is imported, whether or not the simulator
is installed -- wraps that rebuild function so that a sim location that cannot be restored raises CUDA's
text with SIM naming (and an index beyond ``device_count()`` raises CUDA's text for that case).  The
wrapper changes nothing else: other devices, and any ``map_location`` but a callable, go to torch's function.
A callable ``map_location`` (``lambda storage, loc: storage``), which torch's function refuses for this format,
is called with the pickled CPU copy's storage and the saved location, as torch calls it for a CUDA storage.  A process
that never imports ``grader.simulated`` keeps torch's own text (``limit_message`` recognises it).

``map_location`` naming a sim device (``torch.load(f, map_location="sim")``, a dict with sim values, a
callable): torch would move every storage of the file to the device with ``UntypedStorage.to("sim")``,
which the Python backend cannot allocate (the process crashes).  ``install_map_location()`` -- run by
``install()`` -- registers a deserializer for ``sim`` locations that keeps the storage on the CPU and
remembers its target, and tensors built on such a storage are moved to the target device.  The
bookkeeping lives for one ``torch.load`` call."""

from __future__ import annotations

import torch

from .config import DEVICE_TYPE

_ORIG = None


def missing_message(name=DEVICE_TYPE):
    return (
        f"Attempting to deserialize object on a {name.upper()} device but torch.{name}.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
        "to map your storages to the CPU."
    )


def count_message(index, count, name=DEVICE_TYPE):
    return (
        f"Attempting to deserialize object on {name.upper()} device {index} but torch.{name}.device_count() is "
        f"{count}. Please use torch.load with map_location to map your storages to an existing device."
    )


def _check_target(target):
    text = str(target)
    if text == DEVICE_TYPE or text.startswith(DEVICE_TYPE + ":"):
        if torch._C._get_privateuse1_backend_name() != DEVICE_TYPE:
            raise RuntimeError(missing_message())
        mod = getattr(torch, DEVICE_TYPE)
        if not mod.is_available():  # installed, no usable device (gs.unusable()): CUDA's text without a GPU
            raise RuntimeError(missing_message())
        index = torch.device(text).index or 0
        if index >= mod.device_count():
            raise RuntimeError(count_message(index, mod.device_count()))


def _rebuild_with_callable(map_location, data, dtype, device, requires_grad):
    """A callable ``map_location(storage, location)``: torch's own function refuses it ("Callable
    map_location not supported with _rebuild_wrapper_subclass ..."), while a CUDA checkpoint calls it with
    the storage deserialized on the CPU and the saved location ("cuda:0"), then keeps what it returns
    (``lambda s, loc: s``: the tensor stays on the CPU), or restores to the saved location when it returns
    None.  Do the same with the CPU copy the sim tensor was pickled with."""
    storage = data.untyped_storage()
    res = map_location(storage, device)
    if res is None:  # torch.serialization.default_restore_location(storage, location)
        _check_target(device)
        tensor = data.to(dtype=dtype, device=device)
    else:
        if isinstance(res, torch.storage.TypedStorage):
            res = res._untyped_storage
        if res.device != data.device or res.data_ptr() != storage.data_ptr():
            data = torch.empty(0, dtype=data.dtype, device=res.device).set_(
                res, data.storage_offset(), data.size(), data.stride())
        tensor = data.to(dtype=dtype)
    tensor.requires_grad = requires_grad
    return tensor


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    map_location = torch.serialization._serialization_tls.map_location
    if map_location is not None and not isinstance(map_location, (dict, str, torch.device)) and callable(map_location):
        return _rebuild_with_callable(map_location, data, dtype, device, requires_grad)
    location = torch._utils._get_restore_location(device)
    _check_target(location)
    target = torch.device(location) if isinstance(location, str) else location
    if isinstance(target, torch.device) and target.type == DEVICE_TYPE and data.device.type == "cpu" \
            and data.layout is torch.strided and data.dtype == dtype:  # (map_location='sim' moved data already)
        tensor = device_view(data, target)
        tensor.requires_grad = requires_grad
        return tensor
    return _ORIG(data, dtype, device, requires_grad)


# ---- views saved together stay views of one storage ------------------------------------------------
# torch.save writes each storage once, whole, and every tensor as (storage, offset, size, stride); torch.load
# makes each storage once on its device. A device tensor pickles as a CPU view of a host copy of its whole storage,
# one copy per storage and torch.save (so the file holds it once), and loads as a view of one device copy per
# storage and torch.load.
_save_copies: list = []  # one dict per torch.save in progress: (device index, CPU storage address) -> host copy
_load_copies: dict = {}  # (CPU storage's _cdata, device) -> (that storage, its device copy), for one torch.load


def host_view(tensor):
    """The CPU tensor that device tensor `tensor` pickles as: its offset, sizes and strides in a host copy of its
    whole storage."""
    from .device_memory import storage_to_host

    data = tensor._data
    storage = data.untyped_storage()
    copies = _save_copies[-1] if _save_copies else {}
    key = (tensor._idx, storage.data_ptr())
    copy = copies.get(key)
    if copy is None:
        copy = copies[key] = storage_to_host(storage, tensor._mem)
    return torch.empty(0, dtype=data.dtype).set_(copy, data.storage_offset(), data.size(), data.stride())


def device_view(cpu_view, target):
    """`cpu_view` on device `target`, as a view of one device copy of its whole storage per torch.load."""
    storage = cpu_view.untyped_storage()
    key = (storage._cdata, str(target))
    hit = _load_copies.get(key)
    if hit is None:
        whole = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,)).to(target)
        hit = _load_copies[key] = (storage, whole)
    whole = hit[1]
    data = torch.empty(0, dtype=cpu_view.dtype).set_(whole._data.untyped_storage(), cpu_view.storage_offset(),
                                                     cpu_view.size(), cpu_view.stride())
    return type(whole)(data, whole._idx, False, whole._mem)  # a SimTensor, as `whole` is


def install_load_hook():
    global _ORIG
    if _ORIG is not None:
        return
    _ORIG = torch._utils._rebuild_device_tensor_from_cpu_tensor
    fn = _rebuild_device_tensor_from_cpu_tensor
    fn.__module__ = "torch._utils"
    fn.__qualname__ = fn.__name__ = "_rebuild_device_tensor_from_cpu_tensor"
    torch._utils._rebuild_device_tensor_from_cpu_tensor = fn
    wou = getattr(torch, "_weights_only_unpickler", None)
    cached = getattr(wou, "_get_allowed_globals", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


# ---- map_location to a sim device ------------------------------------------------------------
_targets: dict = {}  # id(untyped storage) -> (storage, device); the storage is held so the id stays unique
_ORIG_REBUILD_TENSOR = None


def _tag(obj):
    return None  # sim tensors pickle without device storages (see SimTensor.__reduce_ex__)


def _deserialize(obj, location):
    if not (location == DEVICE_TYPE or location.startswith(DEVICE_TYPE + ":")):
        return None
    mod = getattr(torch, DEVICE_TYPE)
    if not mod.is_available():
        raise RuntimeError(missing_message())
    dev = torch.device(location)
    index = dev.index if dev.index is not None else mod.current_device()
    if index >= mod.device_count():
        raise RuntimeError(count_message(index, mod.device_count()))
    _targets[id(obj)] = (obj, torch.device(DEVICE_TYPE, index))
    return obj


def _rebuild_tensor(storage, storage_offset, size, stride):
    t = _ORIG_REBUILD_TENSOR(storage, storage_offset, size, stride)
    hit = _targets.get(id(storage._untyped_storage)) if _targets else None
    if hit is not None and hit[0] is storage._untyped_storage:
        t = device_view(t, hit[1])
    return t


def install_map_location():
    global _ORIG_REBUILD_TENSOR
    if _ORIG_REBUILD_TENSOR is not None:
        return
    _ORIG_REBUILD_TENSOR = torch._utils._rebuild_tensor
    torch._utils._rebuild_tensor = _rebuild_tensor
    torch.serialization.register_package(1, _tag, _deserialize)
    orig_load = torch.serialization.load

    def load(*args, **kwargs):
        try:
            return orig_load(*args, **kwargs)
        finally:
            _targets.clear()
            _load_copies.clear()

    load.__doc__ = orig_load.__doc__
    load.__wrapped__ = orig_load
    torch.serialization.load = load
    torch.load = load
    orig_save = torch.serialization.save

    def save(*args, **kwargs):
        _save_copies.append({})
        try:
            return orig_save(*args, **kwargs)
        finally:
            _save_copies.pop()

    save.__doc__ = orig_save.__doc__
    save.__wrapped__ = orig_save
    torch.serialization.save = save
    torch.save = save
