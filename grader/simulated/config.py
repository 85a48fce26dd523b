"""State every part of the simulator shares: how many devices, which profile, the current device, and the
virtual costs.  Also the device-index rules (what ``sim`` without an index means, which ordinals exist),
because every other module needs them and they must agree."""

from __future__ import annotations

import torch

DEVICE_TYPE = "sim"
PROFILES = ("cuda", "mps")

COUNT = 2
PROFILE = "cuda"
CURRENT = [0]  # the current device index, as torch.cuda.current_device() (one per process, like CUDA's)
# False inside grader.simulated.unusable(): the build has the accelerator, the machine no usable device of it
USABLE = [True]

# virtual costs, microseconds
LAUNCH_US = 5.0  # host time to launch one op
QUERY_US = 1.4  # host time of one query of a stream or an event (H200, torch 2.11: 1.36-1.40 us per query)
KERNEL_US = 20.0  # device time of one op
COPY_FIXED_US = 10.0  # device time of one copy, fixed part
COPY_BYTES_PER_US = 12_000.0  # ~12 GB/s host<->device
D2D_BYTES_PER_US = 50_000.0

MPS_DOUBLE_MSG = (
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework "
    "doesn't support float64. Please use float32 instead."
)


# Fork, as torch.cuda: once this process has made a device tensor (INITIALIZED), a child forked from it is
# a "bad fork" (torch.cuda._is_in_bad_fork) where making or copying to a device tensor raises CUDA's
# "Cannot re-initialize CUDA in forked subprocess" with this device's name.  The grader's own workers are
# forks of a warmed-up process on purpose: they call grader.simulated.reset_after_fork() first thing.
INITIALIZED = [False]
BAD_FORK = [False]


def bad_fork_error() -> RuntimeError:
    name = DEVICE_TYPE.upper()
    return RuntimeError(
        f"Cannot re-initialize {name} in forked subprocess. To use {name} with multiprocessing, you must use "
        "the 'spawn' start method"
    )


def after_fork_in_child() -> None:
    if INITIALIZED[0]:
        BAD_FORK[0] = True


def configure(count: int, profile: str) -> None:
    global COUNT, PROFILE
    COUNT = int(count)
    PROFILE = profile
    CURRENT[0] = 0


_DEVICES: list[torch.device] = []


def dev(idx: int) -> torch.device:
    while len(_DEVICES) <= idx:
        _DEVICES.append(torch.device(DEVICE_TYPE, len(_DEVICES)))
    return _DEVICES[idx]


def invalid_ordinal(idx: int) -> Exception:
    # CUDA raises torch.AcceleratorError (a RuntimeError) from cudaSetDevice; the first two lines are CUDA's
    # text with the device type renamed, the last says what the simulator was asked for.
    cls = getattr(torch, "AcceleratorError", RuntimeError)
    return cls(
        f"{DEVICE_TYPE.upper()} error: invalid device ordinal\n"
        "GPU device may be out of range, do you have enough GPUs?\n"
        f"(simulated device {DEVICE_TYPE}:{idx} requested; install(count={COUNT}) provides {COUNT} device(s))"
    )


def no_usable_device() -> RuntimeError:
    # what CUDA raises where the build has it and the machine has no GPU for it (CUDA_VISIBLE_DEVICES="")
    return RuntimeError(f"No {DEVICE_TYPE.upper()} GPUs are available")


def check_index(idx: int) -> None:
    if not USABLE[0]:
        raise no_usable_device()
    if idx < 0 or idx >= COUNT:
        raise invalid_ordinal(idx)


def index(device) -> int:
    """Device index of ``device`` (None, int, str or torch.device); no index means the current device."""
    if device is None:
        return CURRENT[0]
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if device.index is None:
        return CURRENT[0]
    return device.index


def default_device():
    """The device torch.set_default_device or a `with torch.device(...)` block gives factories (None: none), as
    set, without an index filled in."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils import _device

    for mode in reversed(_get_current_function_mode_stack()):
        if isinstance(mode, _device.DeviceContext):
            return mode.device
    return _device.CURRENT_DEVICE
