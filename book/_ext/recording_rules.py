"""What a page's recorded outputs must satisfy, checked by the recorder before it writes a record and by
tests/book/ on the records in the repository.

- GPUs: the book shows GPU behaviour, so a page recorded without the GPUs it needs shows the CPU
  fallbacks ("No CUDA GPU here") instead. Every page needs one GPU, multi-gpu.md two.
- Cells tagged `raises-exception` exist to show a real traceback; one that stopped raising shows none.
"""

from __future__ import annotations

# Pages whose outputs need more (or fewer) GPUs than one. A page that needs none would be listed with 0.
GPUS_NEEDED = {"multi-gpu": 2}
RAISES = "raises-exception"


def gpus_needed(page: str) -> int:
    return GPUS_NEEDED.get(page, 1)


def gpu_shortfall(page: str, hardware: dict) -> str | None:
    """Why `hardware` (machine.describe()) is not enough to record `page`, or None."""
    have, need = len(hardware.get("gpus") or []), gpus_needed(page)
    if have >= need:
        return None
    return f"{page} must be recorded with at least {need} GPU(s); this machine shows {have}"


def raises_tagged(cell) -> bool:
    return RAISES in cell.get("metadata", {}).get("tags", [])


def has_traceback(outputs: list) -> bool:
    return any(o.get("output_type") == "error" and o.get("traceback") for o in outputs)


def silent_raisers(cells: list) -> list[int]:
    """1-based numbers of the executed code cells tagged raises-exception whose outputs hold no error."""
    return [i for i, c in enumerate(cells, start=1) if raises_tagged(c) and not has_traceback(c.get("outputs", []))]
