"""The simulated device's memory: each device's caching allocator, the record of each device storage's block
(shared by all its views, freed with the last), and what is done to a whole storage (a copy to the host, a
resize). Below the wrapper tensor (tensor.py), so that storage.py and serialization.py use it without importing
the tensor's dispatch."""

from __future__ import annotations

import weakref

import torch

from . import config, races
from .allocator import CachingAllocator
from .clock import clock, copy_cost, launch, settle_h2d, sync
from .config import DEVICE_TYPE, dev
from .instruments import note_copy

allocators: list[CachingAllocator] = []


def reset_allocators(count, capacity=None):
    allocators.clear()
    allocators.extend(CachingAllocator(i, capacity, DEVICE_TYPE) for i in range(count))


class _StorageRef:
    """One per live CPU storage backing device tensors; shared by all views.
    Dies with the last SimTensor that references it -> its allocator block is freed."""

    __slots__ = ("key", "block", "idx", "streams", "__weakref__")

    def __init__(self, key, block, idx):
        self.key = key
        self.block = block
        self.idx = idx
        self.streams = None  # ids of the streams record_stream named (races.py)

    def __del__(self):
        try:
            if self.streams is None or races.free(allocators[self.idx], self):
                allocators[self.idx].release(self.block)
        except Exception:
            pass


def _alloc(idx, nbytes):
    """A block of device ``idx``'s allocator for the current stream (with side streams, races.py looks at who
    used it last)."""
    if not clock.side:
        return allocators[idx].alloc(nbytes)
    races.process_deferred()
    block = allocators[idx].alloc(nbytes, clock.current.get(idx, 0))
    races.allocated(idx, block)
    return block


_live: "weakref.WeakValueDictionary[int, _StorageRef]" = weakref.WeakValueDictionary()
def _storage_ref(data, idx, block=False) -> "_StorageRef":
    """The allocator's record of `data`'s storage on device `idx`: the one its other views share, else a new
    block (`block`, when the caller reserved it already)."""
    st = data.untyped_storage()
    key = st.data_ptr()
    ref = _live.get(key)
    if ref is None or ref.idx != idx:
        if block is False:
            if config.PROFILE == "mps" and data.dtype is torch.float64:
                raise TypeError(config.MPS_DOUBLE_MSG)
            block = _alloc(idx, st.nbytes())
        ref = _StorageRef(key, block, idx)
        if key:
            _live[key] = ref
    elif block is not False:
        allocators[idx].release(block)
    return ref


def storage_to_host(cpu_storage, ref):
    """A blocking copy of a whole device storage to the host (UntypedStorage.cpu(), torch.save)."""
    if clock.pending_h2d:
        settle_h2d()
    n = cpu_storage.nbytes()
    launch(ref.idx, copy_cost(n), "copy_")
    note_copy("d2h", n, False, False, dev(ref.idx), torch.device("cpu"))
    sync("to_cpu_blocking", ref.idx)
    return cpu_storage.clone()


def resize_storage(cpu_storage, ref, nbytes):
    """UntypedStorage.resize_ of a device storage, as resize_bytes_cuda: a new block (none for 0 bytes), then the
    old one freed; the CPU storage that every view wraps is resized in place."""
    if clock.pending_h2d:
        settle_h2d()
    allocator = allocators[ref.idx]
    block = _alloc(ref.idx, nbytes)
    allocator.release(ref.block)
    old_key = cpu_storage.data_ptr()
    cpu_storage.resize_(nbytes)
    ref.block = block
    if _live.get(old_key) is ref:
        del _live[old_key]
    ref.key = cpu_storage.data_ptr()
    if ref.key:
        _live[ref.key] = ref
    launch(ref.idx, None, "resize_")
