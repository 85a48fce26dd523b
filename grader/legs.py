"""Device legs: the devices a grader runs the learner's code on.

Real legs (the CPU, each CUDA GPU, MPS) share one process. The simulated accelerator registers itself
process-wide and irreversibly, so its leg always runs in a process of its own."""

from __future__ import annotations

import torch

SIMULATED = "sim:0"


def accelerator_legs() -> list[str]:
    """Every real accelerator in this process: each CUDA index, then MPS."""
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
    'cpu', 'cuda' (every GPU), 'cuda:N', 'mps' pick one or more; 'sim' is the simulated accelerator and
    cannot be combined with real legs in the same process. Comma-separated values combine."""
    legs: list[str] = []
    real = real_legs()
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part == "real":
            new = real
        elif part == "accelerators":
            new = accelerator_legs()
        elif part == "sim":
            new = [SIMULATED]
        elif part == "cuda":
            new = [leg for leg in real if leg.startswith("cuda:")]
            if not new:
                raise LegError("--device cuda: this machine has no CUDA GPU")
        elif part in real:
            new = [part]
        else:
            raise LegError(f"--device {part}: not a device here; available: {', '.join(real)}, sim")
        legs += [leg for leg in new if leg not in legs]
    if SIMULATED in legs and len(legs) > 1:
        raise LegError("the simulated accelerator runs in a process of its own: use --device sim alone")
    return legs
