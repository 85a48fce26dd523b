"""Compatibility module: the simulator used to live in this one file.  Each part now has a module of its
own -- config.py (devices, costs), clock.py (virtual clock, copies in flight), allocator.py (CUDA's
caching allocator), pinned.py, placement.py (CUDA's placement rules and messages), tensor.py (SimTensor
and dispatch), rnn.py, generators.py, streams.py, device_module.py (torch.sim), accelerator.py
(torch.accelerator), autocast.py, serialization.py, limits.py and registration.py."""

from .clock import device_time, host_time  # noqa: F401
from .config import DEVICE_TYPE  # noqa: F401
from .registration import register  # noqa: F401
from .tensor import SimTensor, allocators  # noqa: F401
