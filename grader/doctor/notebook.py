"""`%devcourse doctor` in a notebook: the doctor on the cells run so far (or those named), each finding placed
at its cell and the cell's own line number.

The cells are joined into one script, in the order they ran; IPython's own syntax (`%magic`, `!shell` lines)
becomes `pass` on the same line, a cell that starts with another cell magic than `%%exercise` is left out (its
code is not Python), and a cell that does not parse is left out. The script runs as `devcourse doctor` runs
one, from the notebook's folder, in its own process: the kernel's variables are not touched."""

from __future__ import annotations

import ast
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

_IPYTHON_LINE = re.compile(r"^(\s*)[%!]")


@dataclass
class Joined:
    source: str
    where: list[tuple[str, int]]  # script line (index + 1) -> (cell label, line in the cell)


def python_of(cell: str) -> list[str] | None:
    """The cell's lines as Python, line for line (None: a cell to leave out)."""
    lines = cell.splitlines()
    if lines and lines[0].startswith("%%"):
        if not lines[0].startswith("%%exercise"):
            return None
        lines = [""] + lines[1:]  # the %%exercise line: line 1 stays line 1
    out = [(_IPYTHON_LINE.match(line).group(1) + "pass") if _IPYTHON_LINE.match(line) else line for line in lines]
    try:
        ast.parse("\n".join(out))
    except SyntaxError:
        return None
    return out


def join(cells: list[tuple[str, str]]) -> Joined:
    """(label, code) of each cell, in the order they ran -> one script and where each of its lines came from."""
    lines, where = [], []
    for label, code in cells:
        python = python_of(code)
        if python is None:
            continue
        for number, line in enumerate(python, 1):
            lines.append(line)
            where.append((label, number))
    return Joined("\n".join(lines) + "\n", where)


def cells_of_session(shell, wanted: list[int] | None) -> list[tuple[str, str]]:
    """(label "In [n]", code) of the cells run in this kernel before the current one (or those numbered)."""
    history = shell.history_manager.input_hist_raw  # as typed (In holds IPython's translation of magics)
    numbers = range(1, len(history) - 1) if wanted is None else wanted
    return [(f"In [{n}]", history[n]) for n in numbers if 0 < n < len(history) and "%devcourse doctor" not in history[n]]


def parse(line: str):
    """`[--steps N] [--device D] [--profile P] [CELLS]`: CELLS are execution numbers, "3 5-7"."""
    import argparse

    from grader.doctor import DEFAULT_STEPS, DEFAULT_TIMEOUT
    from grader.doctor.command import UsageError, check_device

    p = argparse.ArgumentParser(prog="%devcourse doctor", add_help=False, exit_on_error=False)
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    p.add_argument("--device", default="sim:1")
    p.add_argument("--profile", choices=("cuda", "mps"), default="cuda")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p.add_argument("cells", nargs="*")
    args = p.parse_args(shlex.split(line))
    try:
        args.device = check_device(args.device)  # as `devcourse doctor` reads it: "sim" is sim:1
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    wanted = None
    if args.cells:
        wanted = []
        for item in args.cells:
            first, _, last = item.partition("-")
            wanted += list(range(int(first), int(last or first) + 1))
    return args, wanted


def diagnose_cells(cells: list[tuple[str, str]], steps: int, device: str, profile: str, timeout: float,
                   cwd: str | None = None) -> dict:
    """The doctor's result for these cells, each finding with "cell" and "cell_line" (the cell's own line)."""
    from grader.doctor import diagnose

    joined = join(cells)
    with tempfile.TemporaryDirectory(prefix="devcourse-doctor-cells-") as folder:
        script = Path(folder) / "notebook_cells.py"
        script.write_text(joined.source, encoding="utf-8")
        result = diagnose(str(script), [], device=device, steps=steps, timeout=timeout, profile=profile, cwd=cwd)
    for f in result.get("findings", []):
        if f.get("line") and f["line"] <= len(joined.where):
            f["cell"], f["cell_line"] = joined.where[f["line"] - 1]
    result["script"] = "the notebook's cells"
    return result


def locate(f: dict) -> str:
    if f.get("cell"):
        return f"{f['cell']}, line {f['cell_line']}"
    return "the notebook's cells"
