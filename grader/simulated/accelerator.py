"""``torch.accelerator`` on the simulated device.

torch.accelerator's functions call C++ (``torch._C._accelerator_*``), which reaches the Python backend's
device guard and allocator: the guard's ``synchronizeDevice`` raises "Backend doesn't support
synchronizing all streams on device", ``getDevice`` always answers 0, streams are no-ops and the memory
functions fail ("Allocator for sim is not a DeviceAllocator").  None of that is overridable from Python,
so the ``torch._C._accelerator_*`` entry points are replaced (the Python functions look them up at call
time, so references taken before ``install()`` see the change too).  Each replacement serves the sim when
it is the current accelerator and calls the original otherwise."""

from __future__ import annotations

import torch

from . import config, streams
from .clock import sync
from .tensor import allocators

_ORIG: dict = {}


def _is_sim():
    acc = _ORIG["_accelerator_getAccelerator"]()
    return acc is not None and acc.type == config.DEVICE_TYPE


def _idx(i):
    idx = config.CURRENT[0] if i is None or i < 0 else int(i)
    config.check_index(idx)
    return idx


def _synchronize(i):
    sync("synchronize", _idx(i))


def _get_index():
    return config.CURRENT[0]


def _set_index(i):
    if i is not None and i >= 0:
        config.check_index(i)
        config.CURRENT[0] = i


def _exchange(i):
    prev = config.CURRENT[0]
    _set_index(i)
    return prev


def _get_stream(i):
    return streams.current_stream(_idx(i))


def _set_stream(s):
    streams.set_stream(s)
    config.CURRENT[0] = s._idx  # "This function will set the current device index to the device index of the given stream."


def _capability(i):
    _idx(i)
    return {"supported_dtypes": {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                                 torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
                                 torch.complex64, torch.complex128}}


_SIM = {
    "_accelerator_synchronizeDevice": _synchronize,
    "_accelerator_getDeviceIndex": _get_index,
    "_accelerator_setDeviceIndex": _set_index,
    "_accelerator_exchangeDevice": _exchange,
    "_accelerator_maybeExchangeDevice": _exchange,
    "_accelerator_getStream": _get_stream,
    "_accelerator_setStream": _set_stream,
    "_accelerator_getDeviceCapability": _capability,
    "_accelerator_isAllocatorInitialized": lambda: True,
    "_accelerator_emptyCache": lambda: allocators[config.CURRENT[0]].empty_cache(),
    "_accelerator_emptyHostCache": lambda: None,
    "_accelerator_getDeviceStats": lambda i: allocators[_idx(i)].nested_stats(),
    "_accelerator_resetAccumulatedStats": lambda i: allocators[_idx(i)].reset_accumulated(),
    "_accelerator_resetPeakStats": lambda i: allocators[_idx(i)].reset_peak(),
    "_accelerator_getMemoryInfo": lambda i: allocators[_idx(i)].mem_get_info(),
}


def _route(name, fn):
    orig = _ORIG[name]

    def routed(*args):
        if _is_sim():
            return fn(*args)
        return orig(*args)

    routed.__name__ = name
    return routed


def install():
    _ORIG["_accelerator_getAccelerator"] = torch._C._accelerator_getAccelerator
    for name, fn in _SIM.items():
        orig = getattr(torch._C, name, None)
        if orig is None:
            continue  # not in this torch release
        _ORIG[name] = orig
        setattr(torch._C, name, _route(name, fn))
