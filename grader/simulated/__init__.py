"""A simulated accelerator ("sim") so that device bugs show up without a GPU.

``install(count=2, profile="cuda")`` registers a PyTorch backend named
``sim`` (devices ``sim:0``, ``sim:1``, ...) through PyTorch's Python
PrivateUse1 backend API.  Device tensors keep their data in CPU tensors, but
placement is checked the way CUDA checks it (same error messages, with
``sim`` in place of ``cuda``), copies between host and device are recorded,
the device runs on a deterministic virtual clock (asynchronous launches,
explicit and implicit sync points, stale ``non_blocking`` copies into pinned
memory until a sync), and a caching-allocator model answers
``torch.sim.memory_allocated()`` and friends.

IMPORTANT -- registration is process-wide and irreversible:

* PyTorch has a single PrivateUse1 slot per process.  Once ``install()`` ran,
  the slot is renamed to ``sim``, ``torch.sim`` exists, ``Tensor.sim()`` /
  ``Module.sim()`` exist, and ``torch.accelerator.current_accelerator()``
  answers ``device(type='sim')`` (``torch.accelerator.is_available()`` becomes
  True).  Code that asks "is there an accelerator?" changes its answer.
* The CPU kernels of ``aten::is_pinned`` / ``aten::_pin_memory`` are replaced
  (pinned host memory is simulated); ``torch.Generator``, ``torch.Stream`` and
  ``torch.Event`` become stand-ins that also accept ``device='sim'``;
  ``torch._C._accelerator_*`` serve the sim; backward runs without autograd
  device threads; ``Module._apply`` keeps parameter identity on device moves
  (grader/simulated/registration.py says why for each).
* Every device is fully usable, backward and optimizers included, on ``sim:1``
  as on ``sim:0``; ``install()`` may come after a backward ran.
* Nothing can be unregistered, and ``install`` cannot be re-run with other
  arguments.

So a grader runs the simulated leg in a process of its own (a subprocess or
a dedicated pytest process), never in the process that runs the CPU leg.

Importing this package (without installing) only wraps torch's rebuild
function for device tensors so that a sim checkpoint loaded where sim is
missing fails with CUDA's wording (serialization.py).

Public API: ``DEVICE_TYPE``, ``is_supported()``, ``install()``,
``is_installed()``, ``record()``, ``host_time()``, ``device_time()``,
``set_memory_capacity()``, ``LIMITS``, ``limit_message()``.

Memory capacity per device: 80 GiB unless ``install(memory_capacity=...)``,
``set_memory_capacity(nbytes, device=None)`` or the environment variable
``GRADER_SIM_MEMORY`` (e.g. ``16GiB``) says otherwise; requests beyond it raise
``torch.OutOfMemoryError`` with CUDA's message.

What ``record()`` collects (instruments.py): ``h2d``/``d2h``/``d2d`` copies,
``syncs`` (sync points with a reason), ``host_reads`` (``.item()``, ``int()``,
``float()``, ``bool()``/``if t:``, ``.tolist()``, ``operator.index``, printing of device
values), ``races`` (host writes to pinned memory while a non_blocking copy from
it was in flight), ``launches`` and ``ops``.

What cannot be mirrored is listed in ``LIMITS`` (limits.py), with reasons and
reproductions; ``limit_message(exc)`` names the limit behind an exception.
"""

from __future__ import annotations

import contextlib

from .limits import LIMITS, limit_message  # noqa: F401
from .serialization import install_load_hook as _install_load_hook

_install_load_hook()

DEVICE_TYPE = "sim"
PROFILES = ("cuda", "mps")

_installed_args = None  # (count, profile) once installed


def _torch_version_ok() -> bool:
    import torch

    try:
        parts = torch.__version__.split("+")[0].split(".")
        major, minor = int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except Exception:
        return False
    return (major, minor) >= (2, 11)


def is_supported() -> bool:
    """True where this torch has the Python PrivateUse1 backend API (torch >= 2.11)."""
    try:
        import torch

        if not _torch_version_ok():
            return False
        from torch.utils import backend_registration as br

        acc = getattr(torch._C, "_acc", None)
        return (
            hasattr(br, "_setup_privateuseone_for_python_backend")
            and acc is not None
            and hasattr(acc, "PrivateUse1Hooks")
            and hasattr(acc, "DeviceGuard")
            and hasattr(torch.Tensor, "_make_wrapper_subclass")
        )
    except Exception:
        return False


def is_installed() -> bool:
    return _installed_args is not None


def install(count: int = 2, profile: str = "cuda", *, memory_capacity=None) -> None:
    """Register the simulated device process-wide (see module docstring).

    Idempotent for identical arguments; RuntimeError when unsupported, when
    called again with different arguments, or when another PrivateUse1
    backend already owns the slot.  ``memory_capacity`` (bytes or e.g.
    ``"16GiB"``) sets every device's capacity (default: ``GRADER_SIM_MEMORY`` or 80 GiB).
    """
    global _installed_args
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int, got {count!r}")
    if _installed_args is not None:
        if _installed_args == (count, profile):
            if memory_capacity is not None:
                set_memory_capacity(memory_capacity)
            return
        raise RuntimeError(
            f"simulated device already installed with count={_installed_args[0]}, "
            f"profile={_installed_args[1]!r}; registration is process-wide and "
            f"irreversible, so install(count={count}, profile={profile!r}) needs a "
            "new process"
        )
    if not is_supported():
        import torch

        raise RuntimeError(
            f"the simulated device needs torch >= 2.11 with the Python PrivateUse1 "
            f"backend API; this is torch {torch.__version__}"
        )
    import torch

    name = torch._C._get_privateuse1_backend_name()
    if name not in ("privateuseone", DEVICE_TYPE):
        raise RuntimeError(
            f"the PrivateUse1 backend slot is already taken by {name!r} in this process"
        )
    from .allocator import parse_size
    from .registration import register

    register(count, profile, None if memory_capacity is None else parse_size(memory_capacity))
    _installed_args = (count, profile)


def _require():
    if _installed_args is None:
        raise RuntimeError("grader.simulated.install() has not been called in this process")
    from . import clock

    return clock


@contextlib.contextmanager
def unusable():
    """Inside, the simulated accelerator is built but no device of it is usable, as a CUDA wheel on a machine
    without a GPU: torch.accelerator.is_available() is False and device_count() 0, current_accelerator() still
    names it, and a tensor made on it raises "No SIM GPUs are available". A real accelerator cannot be made so
    inside a process, so a grader checks this case on the simulated legs, which run on every machine."""
    _require()
    from . import config

    config.USABLE[0] = False
    try:
        yield
    finally:
        config.USABLE[0] = True


@contextlib.contextmanager
def record():
    """Record copies, sync points and launches on the simulated device::

        with record() as rec:
            loss.item()
        rec.syncs[0].reason == "item"
    """
    _require()
    from .instruments import record as _record

    with _record() as rec:
        yield rec


def host_time() -> float:
    """Virtual host clock in milliseconds (advances by a launch cost per op,
    and up to the device's completion time at every sync point)."""
    return _require().host_time()


def device_time(device=None) -> float:
    """Virtual time (ms) at which the given device's queue drains."""
    return _require().device_time(device)


def reset_after_fork() -> None:
    """Let this forked child use the simulated device.

    As on CUDA, a child forked from a process that has made a sim tensor is a "bad fork": making a sim
    tensor or copying to sim there raises "Cannot re-initialize SIM in forked subprocess. To use SIM with
    multiprocessing, you must use the 'spawn' start method" (so a learner's DataLoader worker fails as on
    CUDA).  A process forked on purpose from a warmed-up simulator -- the grader's workers, forks of the
    sim zygote -- calls this right after the fork.  Its own forks are bad forks again."""
    from . import config

    config.BAD_FORK[0] = False


def set_memory_capacity(nbytes, device=None) -> None:
    """Capacity of device ``device`` (index, "sim:N" or torch.device; None: every device) in bytes, or a
    string like ``"16GiB"``.  Allocations beyond it raise torch.OutOfMemoryError as on CUDA."""
    _require()
    import torch

    torch.sim.set_memory_capacity(nbytes, device)


__all__ = [
    "reset_after_fork",
    "set_memory_capacity",
    "LIMITS",
    "limit_message",
    "DEVICE_TYPE",
    "is_supported",
    "install",
    "is_installed",
    "record",
    "host_time",
    "device_time",
]
