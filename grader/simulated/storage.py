"""What a device tensor's storage answers: ``x.untyped_storage()``, ``x.storage()`` and ``x.data_ptr()``.

On CUDA a tensor's storage is its caching-allocator block, shared by all its views: ``data_ptr()`` is the
block's address plus the view's offset (so blocks are 512-byte aligned, a freed block's address goes to the next
request it fits, and ``x[2:].data_ptr() - x.data_ptr()`` is 8 bytes of float32), and
``untyped_storage()`` reports the whole block's bytes (``nbytes()``), its address and its device, and can be
resized (``resize_(0)`` frees the memory, as FSDP and activation offloading do).

A wrapper tensor's own storage has no data ("Attempted to access the data pointer on an invalid python
storage") and only the bytes its own view spans. So a device tensor's storage object (the wrapper's, which
PyTorch keeps one Python object of) becomes a ``SimStorage``: it answers from the CPU storage that holds the
values (shared by the views) and from the allocator block of the device (``device_memory._StorageRef``), whose
virtual addresses follow CUDA's allocator rule for rule (allocator.py)."""

from __future__ import annotations

import torch


def address(ref, offset_bytes: int = 0) -> int:
    """The device address of a storage's byte `offset_bytes`: its block's, 0 where it has none (0 bytes)."""
    block = getattr(ref, "block", None)
    return block.addr + offset_bytes if block is not None else offset_bytes


def tensor_address(t) -> int:
    data = t._data
    return address(t._mem, data.storage_offset() * data.element_size())


class SimStorage(torch.UntypedStorage):
    """The storage of a device tensor (the class of its wrapper's storage object once asked for)."""

    def data_ptr(self):
        return address(self._sim_ref)

    def nbytes(self):
        return self._sim_cpu.nbytes()

    def size(self):
        return self._sim_cpu.nbytes()

    def __len__(self):
        return self._sim_cpu.nbytes()

    @property
    def device(self):
        return self._sim_device

    @property
    def is_cuda(self):
        return False

    def is_pinned(self, device=None):
        return False

    def tolist(self):
        return self.cpu().tolist()

    def cpu(self):
        from .device_memory import storage_to_host

        return storage_to_host(self._sim_cpu, self._sim_ref)

    def resize_(self, nbytes):
        """As resize_bytes_cuda: a block of the new size (none for 0 bytes), the old bytes copied, the old block
        freed; every view of the storage sees the new one."""
        from .device_memory import resize_storage

        resize_storage(self._sim_cpu, self._sim_ref, int(nbytes))
        return self


def of(tensor, wrapper_storage):
    """The storage object of device tensor `tensor`, answering as CUDA's does."""
    if type(wrapper_storage) is not SimStorage:
        wrapper_storage.__class__ = SimStorage
    wrapper_storage._sim_cpu = tensor._data.untyped_storage()
    wrapper_storage._sim_ref = tensor._mem
    wrapper_storage._sim_device = tensor.device
    return wrapper_storage
