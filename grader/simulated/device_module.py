"""``torch.sim``: the device module, mirroring the torch.cuda functions a course uses.

Registered by ``torch._register_device_module``; PyTorch itself calls some of these (``manual_seed_all``
from ``torch.manual_seed``, ``get_amp_supported_dtype`` from ``torch.autocast``, ``current_device`` from
``Tensor.sim()``, ``is_available`` / ``device_count`` from ``torch.load``)."""

from __future__ import annotations

import torch

from . import config, generators, streams
from .allocator import parse_size
from .clock import device_time, host_time, launch, sync, sync_debug_mode
from .tensor import allocators


def _idx(device=None):
    idx = config.index(device)
    config.check_index(idx)
    return idx


class device:
    """Context manager that changes the current device (``with torch.sim.device(1):``), as torch.cuda.device."""

    def __init__(self, device):
        self.idx = -1 if device is None else config.index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = config.CURRENT[0]
        if self.idx >= 0:
            config.check_index(self.idx)
            config.CURRENT[0] = self.idx

    def __exit__(self, *exc):
        config.CURRENT[0] = self.prev_idx
        return False


class device_of(device):
    """Context manager that makes the device of tensor ``obj`` current (CPU tensors: no-op)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == config.DEVICE_TYPE else -1)


class _Properties:
    """What torch.cuda.get_device_properties answers, for a simulated device."""

    def __init__(self, idx):
        self.name = f"Simulated accelerator ({config.PROFILE} profile)"
        self.total_memory = allocators[idx].capacity
        self.major, self.minor = (9, 0) if config.PROFILE == "cuda" else (0, 0)
        self.multi_processor_count = 132
        self.uuid = f"00000000-0000-0000-0000-{idx:012d}"
        self.index = idx

    def __repr__(self):
        return (f"_{config.DEVICE_TYPE.capitalize()}DeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


class _DeviceModule:
    Event = streams.SimEvent
    Stream = streams.SimStream
    _gpu_trace = streams.gpu_trace
    Generator = generators.SimGenerator
    OutOfMemoryError = torch.OutOfMemoryError
    device = device
    device_of = device_of

    # --- devices ---------------------------------------------------------------------------
    @staticmethod
    def is_available():
        return config.USABLE[0]

    @staticmethod
    def is_initialized():
        return not config.BAD_FORK[0]

    @staticmethod
    def _is_in_bad_fork():
        return config.BAD_FORK[0]

    @staticmethod
    def _lazy_init():
        pass

    @staticmethod
    def init():
        pass

    @staticmethod
    def device_count():
        return config.COUNT if config.USABLE[0] else 0

    @staticmethod
    def current_device():
        return config.CURRENT[0]

    @staticmethod
    def set_device(device):
        idx = config.index(device)
        if idx < 0:
            return
        config.check_index(idx)
        config.CURRENT[0] = idx

    @staticmethod
    def get_device_name(device=None):
        return f"Simulated accelerator ({config.PROFILE} profile)"

    @staticmethod
    def get_device_capability(device=None):
        return (9, 0) if config.PROFILE == "cuda" else (0, 0)

    @staticmethod
    def get_device_properties(device=None):
        idx = _idx(device)
        return _Properties(idx)

    @staticmethod
    def can_device_access_peer(device, peer_device):
        _idx(device), _idx(peer_device)
        return True

    @staticmethod
    def get_amp_supported_dtype():
        return [torch.float16, torch.bfloat16]

    @staticmethod
    def is_bf16_supported(including_emulation=True):
        return True

    # --- random numbers (one default generator per device, generators.py) -------------------
    @staticmethod
    def manual_seed(seed):
        generators.default(config.CURRENT[0]).manual_seed(int(seed))

    @staticmethod
    def manual_seed_all(seed):
        for g in generators.defaults:
            g.manual_seed(int(seed))

    @staticmethod
    def seed():
        generators.default(config.CURRENT[0]).seed()

    @staticmethod
    def seed_all():
        s = generators.default(config.CURRENT[0]).seed()
        for g in generators.defaults:
            g.manual_seed(s)

    @staticmethod
    def initial_seed():
        return generators.default(config.CURRENT[0]).initial_seed()

    @staticmethod
    def get_rng_state(device="sim"):
        return generators.default(_idx(device)).get_state()

    @staticmethod
    def set_rng_state(new_state, device="sim"):
        generators.default(_idx(device)).set_state(new_state)

    @staticmethod
    def get_rng_state_all():
        return [g.get_state() for g in generators.defaults]

    @staticmethod
    def set_rng_state_all(new_states):
        for g, s in zip(generators.defaults, new_states):
            g.set_state(s)

    @staticmethod
    def default_generator(device=None):
        return generators.default(_idx(device))

    # --- streams and sync ---------------------------------------------------------------------
    @staticmethod
    def set_sync_debug_mode(debug_mode):
        if isinstance(debug_mode, str):
            modes = {"default": 0, "warn": 1, "error": 2}
            if debug_mode not in modes:
                raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
            debug_mode = modes[debug_mode]
        sync_debug_mode[0] = int(debug_mode)

    @staticmethod
    def get_sync_debug_mode():
        return sync_debug_mode[0]

    @staticmethod
    def synchronize(device=None):
        # as torch.cuda.synchronize: waits for the current device only (device=None), not for every device
        sync("synchronize", _idx(device))

    @staticmethod
    def _sleep(cycles):
        """As torch.cuda._sleep: a kernel that spins ``cycles`` GPU clock cycles on the current device
        (virtual time at 1.5 GHz)."""
        launch(config.CURRENT[0], int(cycles) / 1500.0, "_sleep")

    @staticmethod
    def current_stream(device=None):
        return streams.current_stream(_idx(device))

    @staticmethod
    def default_stream(device=None):
        return streams.default_stream(_idx(device))

    @staticmethod
    def set_stream(stream):
        streams.set_stream(stream)

    @staticmethod
    def stream(stream):
        return streams._StreamContext(stream)

    # --- memory (allocator.py) ----------------------------------------------------------------
    @staticmethod
    def memory_allocated(device=None):
        return allocators[_idx(device)].allocated

    @staticmethod
    def max_memory_allocated(device=None):
        return allocators[_idx(device)].peak

    @staticmethod
    def memory_reserved(device=None):
        return allocators[_idx(device)].reserved

    @staticmethod
    def max_memory_reserved(device=None):
        return allocators[_idx(device)].peak_reserved

    @staticmethod
    def reset_peak_memory_stats(device=None):
        allocators[_idx(device)].reset_peak()

    @staticmethod
    def reset_max_memory_allocated(device=None):
        allocators[_idx(device)].reset_peak()

    @staticmethod
    def reset_accumulated_memory_stats(device=None):
        allocators[_idx(device)].reset_accumulated()

    @staticmethod
    def empty_cache():
        # torch.cuda.empty_cache() releases the cached blocks of the current device
        allocators[config.CURRENT[0]].empty_cache()

    @staticmethod
    def memory_stats(device=None):
        return allocators[_idx(device)].flat_stats()

    @staticmethod
    def mem_get_info(device=None):
        return allocators[_idx(device)].mem_get_info()

    @staticmethod
    def memory_summary(device=None, abbreviated=False):
        a = allocators[_idx(device)]
        mib = 1024 * 1024
        return (
            f"simulated {config.DEVICE_TYPE} memory summary, device ID {_idx(device)}\n"
            f"  allocated: {a.allocated / mib:.1f} MiB (peak {a.peak / mib:.1f} MiB)\n"
            f"  reserved:  {a.reserved / mib:.1f} MiB (peak {a.peak_reserved / mib:.1f} MiB)\n"
            f"  segments:  {len(a.segments)}, retries: {a.num_alloc_retries}, OOMs: {a.num_ooms}\n"
        )

    @staticmethod
    def set_per_process_memory_fraction(fraction, device=None):
        """As torch.cuda: this process may reserve ``fraction`` of the device's capacity; beyond it
        OutOfMemoryError, whose message then says "<N> allowed;"."""
        if not isinstance(fraction, float) and not isinstance(fraction, int):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if fraction < 0 or fraction > 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        a = allocators[_idx(device)]
        a.allowed = int(fraction * a.capacity)

    @staticmethod
    def get_per_process_memory_fraction(device=None):
        a = allocators[_idx(device)]
        return 1.0 if a.allowed is None else a.allowed / a.capacity

    @staticmethod
    def set_memory_capacity(nbytes, device=None):
        """Capacity of one device (``device`` None: every device); bytes or a string like ``"16GiB"``."""
        n = parse_size(nbytes)
        targets = allocators if device is None else [allocators[_idx(device)]]
        for a in targets:
            a.capacity = n

    # --- the virtual clock ----------------------------------------------------------------------
    @staticmethod
    def host_time():
        return host_time()

    @staticmethod
    def device_time(device=None):
        return device_time(device)
