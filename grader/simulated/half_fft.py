"""torch.fft of float16 data on the device: CUDA computes it (cuFFT, for power-of-two sizes), but PyTorch's fft
front end accepts float16 only for a CUDA tensor, before any dispatch ("Unsupported dtype Half"), so the
simulator never sees the call. Its functions are wrapped here to say so as a simulator limit
(LIMITS['half_fft']), instead of an error CUDA would not raise."""

from __future__ import annotations

import functools

import torch

from . import config

_HALF = (torch.float16, torch.complex32)


def _refusing_half(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        x = args[0] if args else kwargs.get("input")
        if isinstance(x, torch.Tensor) and x.dtype in _HALF and x.device.type == config.DEVICE_TYPE:
            raise NotImplementedError(
                f"the simulated device cannot compute torch.fft.{name} of {str(x.dtype).replace('torch.', '')} "
                "data (CUDA can, for sizes that are powers of two): convert to float32 to run it here")
        return fn(*args, **kwargs)

    return wrapper


def install():
    if config.PROFILE != "cuda":  # recorded for CUDA only
        return
    for name in dir(torch.fft):
        fn = getattr(torch.fft, name)
        if not name.startswith("_") and callable(fn) and not isinstance(fn, type) and name not in (
                "fftfreq", "rfftfreq", "fftshift", "ifftshift"):
            setattr(torch.fft, name, _refusing_half(name, fn))
