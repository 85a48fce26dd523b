"""What machine produced a result: kept next to every number recorded on real hardware."""

from __future__ import annotations

import datetime
import platform
import subprocess

import torch


def describe() -> dict:
    """GPU names, driver, CUDA, torch, Python, platform and today's date (GPU fields empty without CUDA)."""
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return {
        "gpus": gpus,
        "driver": _driver() if gpus else None,
        "cuda": torch.version.cuda if gpus else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.date.today().isoformat(),
    }


def _driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out[0] if out else None
