"""Findings about where tensors live, each at the line to fix: the device mismatches that grader.doctor.mismatch
went on after, and the module state a model's move left behind (grader.doctor.observe.watch_module_moves).

A tensor left behind by `.to()` is reported at the attribute's assignment (where register_buffer goes), with the
move and the mismatch it caused as related lines; a mismatch of a tensor made in the script is reported where it
was made or assigned, with its use related; a module kept on another device than its input gets both moves."""

from __future__ import annotations

from collections import defaultdict

from grader.doctor.findings import Finding, plural
from grader.doctor.mismatch import DEVICE, Mismatch
from grader.engine.instruments import Line


def _as_cuda(text: str) -> str:
    return DEVICE.sub(lambda m: ("cuda" if m.group(1) == "sim" else m.group(1))
                      + (f":{m.group(2)}" if m.group(2) else ""), text)


def related(line: Line | None, message: str) -> dict | None:
    return {"line": line.number, "source": line.code, "message": message} if line else None


def _finding(code, message, path, line: Line | None, related_lines) -> Finding:
    return Finding(code, message, path, line.number if line else None, line.code if line else "",
                   related=[r for r in related_lines if r and (not line or r["line"] != line.number)])


def findings(left_behind: list, mismatches: list[Mismatch], finder, path: str, lines: list[str],
             device: str) -> list[Finding]:
    out = []
    claimed = set()  # mismatches told inside a left-behind finding
    groups: dict = {}
    for item in left_behind:
        number = finder._attribute(item.owner, item.attribute) if item.owner else None
        made = Line(number, lines[number - 1].strip()) if number else item.line
        group = groups.setdefault((made, item.target), {"whats": [], "moves": [], "ids": set()})
        if item.what not in group["whats"]:
            group["whats"].append(item.what)
        if item.line not in group["moves"]:
            group["moves"].append(item.line)
        group["ids"] |= set(item.ids)
    for (made, target), group in groups.items():
        caused = [m for m in mismatches if m.stray_ids & group["ids"]]
        claimed.update(id(m) for m in caused)
        whats = group["whats"]
        moves = ", ".join(f"line {m.number}" for m in group["moves"] if m)
        message = (f"{' and '.join(whats)} {'was' if len(whats) == 1 else 'were'} not moved by the model's move to "
                   f"{target} ({moves}): .to() moves parameters, registered buffers and submodules only.")
        for m in caused:
            message += (f"\nLine {m.line.number if m.line else '?'} then mixed devices ({plural(m.count, 'time')}): "
                        f"{m.error.splitlines()[0]}\nThe doctor went on as if it had been on {m.target}.")
        message += ("\nRegister a tensor here with self.register_buffer(name, tensor) and keep modules in "
                    "nn.ModuleList or nn.ModuleDict (or make a tensor inside forward on the input's device: "
                    "device=x.device).")
        rel = [related(line, "the model's move") for line in group["moves"]]
        rel += [related(m.line, "the operation that mixed devices") for m in caused]
        out.append(_finding("left-behind", message, path, made, rel))
    for m in mismatches:
        if id(m) not in claimed:
            out.append(_mismatch(m, path, device))
    return out


def _mismatch(m: Mismatch, path: str, device: str) -> Finding:
    devices = {s.device for s in m.strays} | {m.target}
    lost = len({d for d in devices if not d.startswith(("cpu", "meta"))}) >= 2 and not any(
        d.startswith("cpu") for d in devices)
    message = m.error
    if "sim" in message:
        message += f"\nAs CUDA says it: {_as_cuda(m.error.partition(': ')[2])}"
    named = [f"`{s.name}` is on {s.device}" for s in m.strays] + [f"`{s.name}` is on {s.device}" for s in m.others]
    if named:
        message += f"\nIn this statement: {', '.join(named)}."
    modules = [s for s in m.strays if s.module]
    primary = next((s.made for s in m.strays if s.made), None)
    for s in m.strays:
        if s.made and s.made != primary and (not m.line or s.made.number != m.line.number):
            via = "".join(f" (through line {v.number})" for v in s.via)
            message += f"\n`{s.name}` was made or assigned at line {s.made.number}{via}."
    rel = [related(m.line, "the operation that mixed devices")]
    if lost:
        advice = (f"Two accelerators in one operation: a device index was lost on the way. The script's device is "
                  f"{device}; a tensor made with torch.device(x.device.type), .cuda(), \"cuda\" or "
                  "torch.cuda.current_device() lands on the *current* device (index 0) instead. Pass the whole "
                  "device (x.device) along.")
    elif modules and len(modules) == len(m.strays):
        # A module kept on one device on purpose (an embedding table too large for the GPU) is right too: its
        # input then belongs there; both moves are offered, and the line that moved the input comes first.
        names = " and ".join(f"`{s.name}`" for s in modules)
        inputs = [s for s in m.others if not s.module]
        moved = next((s.made for s in inputs if s.made), None)
        shown = " and ".join(f"`{s.name}`" for s in inputs) or "its input"
        advice = (f"{names} {'is' if len(modules) == 1 else 'are'} on {modules[0].device}, {shown} on {m.target}. "
                  f"Either move {names} to {m.target} with the model (.to(device) where it is made), or, if it stays "
                  f"on {modules[0].device} on purpose (a table too large for the device), keep {shown} there: "
                  + (f"do not move it at line {moved.number}, " if moved else "")
                  + f"and move the result to {m.target} (its output.to(device)).")
        if moved and all(s.table for s in modules):
            # an embedding table off the device is most often there on purpose: the line to change is the move
            rel.append(related(primary, f"where {names} was made"))
            primary = moved
        elif moved:
            rel.append(related(moved, f"where {shown} was moved"))
    else:
        others = sorted({s.device for s in m.strays}) or ["the CPU"]
        advice = (f"Make {'it' if len(m.strays) <= 1 else 'them'} on {m.target} where "
                  f"{'it is' if len(m.strays) <= 1 else 'they are'} made (device=x.device), or move "
                  f"{'it' if len(m.strays) <= 1 else 'them'} there once with .to(device); a tensor kept by a module "
                  f"belongs in a registered buffer. If what is on {' and '.join(others)} is there on purpose, move "
                  f"the others to {' and '.join(others)} instead.")
    message += f"\n{advice}\nThe doctor went on as if it had been on {m.target} (moved for that operation only" \
               f"{', ' + plural(m.count, 'time') if m.count > 1 else ''}), so what came after it was checked too."
    return _finding("lost-index" if lost else "device-mismatch", message, path, primary or m.line, rel)
