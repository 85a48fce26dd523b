"""Device legs: the devices a grader runs the learner's code on.

Real legs (the CPU, each CUDA GPU, MPS) share one process. The simulated accelerator registers itself
process-wide and irreversibly, so its legs always run in a process of their own. It has two devices: checks
run on `sim:0` and on `sim:1` while the current device stays `sim:0`, so that code which loses a device index
fails on a laptop as it does on `cuda:1`.

torch is imported only when legs are enumerated, so that the learner's command-line tool starts fast."""

from __future__ import annotations

import sys

SIMULATED_LEGS = ["sim:0", "sim:1"]


def simulated_profile(device_type: str) -> str | None:
    """The device the simulator stands for ("cuda" or "mps") where `device_type` is the simulated device's, else
    None (a real device, or no simulator in this process: it is looked up, never imported)."""
    config = sys.modules.get("grader.simulated.config")
    return config.PROFILE if config is not None and device_type == config.DEVICE_TYPE else None


def accelerator_legs() -> list[str]:
    """Every real accelerator in this process: each CUDA index, then MPS."""
    import torch

    legs = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        legs.append("mps")
    return legs


def real_legs() -> list[str]:
    return ["cpu", *accelerator_legs()]


def family(leg: str) -> str:
    """'cpu' or 'accelerator': the name course.toml uses for a group of legs."""
    return "cpu" if leg == "cpu" else "accelerator"


class LegError(ValueError):
    pass


def parse(spec: str) -> list[str]:
    """Expand a --device value into legs of one process.

    'real' (the default): the CPU and every real accelerator; 'accelerators': the real accelerators;
    'cpu', 'cuda' (every GPU), 'cuda:N', 'mps' pick one or more; 'sim' is the simulated accelerator (both
    of its devices; 'sim:0' or 'sim:1' alone), which cannot share a process with real legs. Comma-separated
    values combine."""
    legs: list[str] = []
    real = real_legs()
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part == "real":
            new = real
        elif part == "accelerators":
            new = accelerator_legs()
        elif part == "sim":
            new = list(SIMULATED_LEGS)
        elif part in SIMULATED_LEGS:
            new = [part]
        elif part == "cuda":
            new = [leg for leg in real if leg.startswith("cuda:")]
            if not new:
                raise LegError("--device cuda: this machine has no CUDA GPU")
        elif part in real:
            new = [part]
        else:
            raise LegError(f"--device {part}: not a device here; available: {', '.join(real)}, sim, sim:0, sim:1")
        legs += [leg for leg in new if leg not in legs]
    if any(leg in SIMULATED_LEGS for leg in legs) and not set(legs) <= set(SIMULATED_LEGS):
        raise LegError("the simulated accelerator runs in a process of its own: use --device sim alone")
    return legs


_KEYWORDS = ("real", "accelerators", "cpu", "cuda", "mps", "sim")


def is_simulated(spec: str) -> bool:
    return all(p.strip() == "sim" or p.strip() in SIMULATED_LEGS for p in spec.split(",") if p.strip())


def parse_syntax(spec: str) -> None:
    """Check a --device value without looking at the machine (no torch): the worker resolves it."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    for part in parts:
        kind, _, index = part.partition(":")
        if not (part in _KEYWORDS or part in SIMULATED_LEGS or (kind == "cuda" and index.isdigit())):
            raise LegError(f"--device {part}: not a device name; use real, accelerators, cpu, cuda, cuda:N, mps, "
                           "sim, sim:0 or sim:1")
    if not parts:
        raise LegError("--device: give at least one device")
    if any(p == "sim" or p in SIMULATED_LEGS for p in parts) and not is_simulated(spec):
        raise LegError("the simulated accelerator runs in a process of its own: use --device sim alone")
