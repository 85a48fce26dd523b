"""From what was watched (grader.doctor.observe, grader.doctor.steps, grader.engine.instruments' Measurement) to
findings, each at the learner's line.

"Per step" means: in at least two iterations of a loop of steps (grader.doctor.loops.Loops.step_loop: the innermost
loop that works on the device, not an epoch's loop around a loop of batches), counted per iteration of that loop,
so a one-off at set-up, a read once per epoch or a print every 100 steps is not reported."""

from __future__ import annotations

import ast
import gc
import re
import traceback
from collections import Counter, defaultdict

import torch

from grader.doctor import placement
from grader.doctor.mismatch import DEVICE, MISMATCH
from grader.doctor.findings import Finding, plural, size
from grader.engine.instruments import Line



class Analysis:
    def __init__(self, rec, steps, path: str, lines: list[str], scopes: list[dict] = (), continued=None):
        self.rec, self.steps, self.path, self.lines = rec, steps, path, lines
        self.continued = continued  # grader.doctor.mismatch.Continue: the mismatches gone on after
        self.loops = rec.loops
        self.scopes = list(scopes)  # the script's namespaces (module, frames of its functions): who holds what
        self.m = rec.measurement
        self.device = str(rec.device)

    # ---------------------------------------------------------------------------------------- helpers
    def finding(self, code: str, message: str, line: Line | None, **kw) -> Finding:
        return Finding(code, message, self.path, line.number if line else None, line.code if line else "", **kw)

    def repeated(self, events) -> dict:
        """{line: (count, per iteration, loop line)} of the lines whose (context, line) events happen in two
        iterations or more of a loop of steps (grader.doctor.loops.Loops.step_loop), counted in that loop."""
        iterations = defaultdict(lambda: defaultdict(set))  # line -> loop line -> {(uid, iteration)}
        counts = defaultdict(Counter)  # line -> loop line -> events
        for context, line in events:
            if line is None:
                continue
            found = self.loops.step_loop(context)
            if found is None:
                continue
            loop, iteration = found
            iterations[line][loop.line].add((loop.uid, iteration))
            counts[line][loop.line] += 1
        out = {}
        for line, by_loop in iterations.items():
            for loop_line, seen in sorted(by_loop.items(), key=lambda item: -len(item[1])):
                if len(seen) >= 2:
                    n = counts[line][loop_line]
                    out[line] = (n, max(1, round(n / len(seen))), loop_line)
                    break
        return out

    @staticmethod
    def per_iteration(loop_line: int) -> str:
        return f"per iteration of the loop at line {loop_line}"

    def main_step(self):
        """The loop of steps whose last iteration the report's traffic shows: the one of the last optimizer step,
        else the first loop of steps; (loop, its last iteration) or None."""
        candidates = [self.loops.step_loop(c) for c in reversed(self.steps.optimizer_contexts)]
        candidates += [self.loops.step_loop(((loop.uid, loop.iteration),)) for loop in self.loops.seen.values()]
        for found in candidates:
            if found is not None:
                loop = found[0]
                return loop, loop.iteration
        return None

    # ---------------------------------------------------------------------------------------- findings
    def all(self) -> list[Finding]:
        out = []
        out += self.host_reads()
        out += self.syncs()
        out += self.data_dependent()
        out += self.copies()
        out += self.early_reads()
        out += self.float64()
        out += self.left_behind()
        out += self.graphs_kept()
        out += self.memory_kept()
        out += self.unsynced_timing()
        out += self.empty_caches()
        out += self.loads()
        return out

    def unsynced_timing(self):
        """A clock read by the script that ends an interval in which the device worked, most of that work queued
        after the host last waited: on a GPU the interval measures the launches, not the work."""
        out, seen = [], set()
        clocks = self.rec.clocks
        for start, stop in zip(clocks, clocks[1:]):
            work = stop.kernels - start.kernels
            unwaited = stop.kernels - max(start.kernels, stop.kernels_at_wait)
            if work <= 0 or unwaited * 2 < work or stop.line is None or stop.line in seen:
                continue
            seen.add(stop.line)
            out.append(self.finding("unsynced-timing", (
                f"reads the clock after {plural(work, 'operation')} on {self.device} that nothing waited for "
                f"(the clock was read before at line {start.line.number if start.line else '?'}): the device runs "
                "them after Python has queued them, so on a GPU this measures how fast they were queued. Call "
                "torch.accelerator.synchronize() just before reading the clock (and before starting it), or time "
                "with torch.utils.benchmark, which does."), stop.line,
                related=[placement.related(start.line, "the clock started")] if start.line else []))
        return out

    def empty_caches(self):
        out = []
        for line, (n, per, loop) in self.repeated(self.rec.empty_caches).items():
            out.append(self.finding("empty-cache-per-step", (
                f"empty_cache() {self.per_iteration(loop)} ({n} in the iterations run): it hands the allocator's "
                "cached blocks back to the driver, which the next iteration must ask for again (slow, and a "
                "synchronisation), and it frees no memory that tensors still hold. Remove it; call it only between "
                "phases, to give memory to another process."), line))
        return out

    def loads(self):
        out, seen = [], set()
        for item in self.rec.loads:
            if item.line in seen:
                continue
            seen.add(item.line)
            devices = ", ".join(item.devices)
            step = (" With map_location=device an optimizer's checkpoint puts Adam's `step` counters on the device "
                    "too, where every step reads them: load it with map_location=\"cpu\" and let "
                    "optimizer.load_state_dict move the moments to each parameter's device.") if item.has_step else ""
            out.append(self.finding("load-without-map-location", (
                f"torch.load without map_location put the checkpoint's tensors back on {devices}, the device they "
                "were saved from. On a machine without that device (a laptop without CUDA) it raises \"Attempting "
                "to deserialize object on a CUDA device but torch.cuda.is_available() is False\"; on one with fewer "
                "GPUs, on a device that does not exist. Pass map_location=device (or \"cpu\")." + step), item.line))
        return out

    def graphs_kept(self):
        """Operations of one iteration that take a tensor with its autograd graph from an earlier iteration
        (habits.carried), confirmed by the device memory those graphs still hold at the end."""
        out, seen = [], {}
        for context, line, made, uid in self.rec.carries:
            if line is not None and line not in seen:
                seen[line] = (made, uid)
        self.carried_loops = {uid for _, uid in seen.values()}
        for line, (made, uid) in seen.items():
            loop = self.loops.seen[uid]
            held = 0
            for h in list(self.rec.held.values()):
                t = h.ref()
                if t is not None and t.grad_fn is not None and dict(h.step).get(uid, loop.iteration) < loop.iteration:
                    held += h.nbytes
            kept = f" ({size(held)} of device memory still held by graphs of earlier iterations)" if held else ""
            out.append(self.finding("graph-kept", (
                f"this operation takes a tensor made in an earlier iteration of the loop at line {loop.line}, with "
                f"its autograd graph{kept}: each iteration's graph stays alive through the next, and memory grows "
                "until it runs out. Keep loss.detach() (or accumulate under torch.no_grad(), as evaluation should "
                "run), or detach a state carried over (h = h.detach())."), line))
        return out

    def host_reads(self):
        out = []
        for line, (n, per, loop) in self.repeated(self.rec.reads).items():
            if self.rec.by_design[line] >= n:
                continue  # all of them inside GradScaler (observe.BY_DESIGN)
            advice = (".item(), float(), int(), bool(), .tolist(), an `if` on a tensor or print(t) make Python wait "
                      "until the device has done all the work queued. Keep the running value on the device (total += "
                      "loss.detach()) and read it once, after the loop or every few hundred steps.")
            if line in self.steps.step_on_device:
                advice = ("the optimizer reads its `step` counters, which are on the device: a checkpoint loaded "
                          "with map_location=device put them there, and each step waits for the device to read "
                          "them. Load it with map_location=\"cpu\": optimizer.load_state_dict moves the moments to "
                          "each parameter's device and keeps `step` on the CPU.")
            out.append(self.finding("host-read-per-step", (
                f"{plural(per, 'read')} of a {self.device} value {self.per_iteration(loop)} ({n} in the iterations "
                f"run): {advice}"), line))
        return out

    def syncs(self):
        """synchronize() calls (observe.watch_synchronize), and waits for one stream or event (the measurement's)."""
        events = [(step, line) for step, line, _ in self.rec.syncs]
        own = {line for _, line in events}
        events += [e for e in self.rec.waits if e[1] not in own]
        waited = defaultdict(set)
        for _, line, device in self.rec.syncs:
            waited[line].add(device)
        out = []
        for line, (n, per, loop) in self.repeated(events).items():
            other = sorted(waited[line] - {self.device})
            note = (f" It waits for {', '.join(other)}, the current device, not {self.device} where the work runs: "
                    "as a timing it measures nothing.") if other else ""
            if line in self.rec.timing_syncs:
                continue  # it brackets a clock read: timing, the one use the course gives it
            out.append(self.finding("sync-per-step", (
                f"{plural(per, 'explicit synchronisation')} {self.per_iteration(loop)}: the host waits for the "
                "device to finish every iteration, so nothing overlaps. Remove it; synchronize only to time, or "
                f"before reading a non_blocking copy.{note}"), line))
        return out

    def data_dependent(self):
        events = self.rec.data_dependent
        names = defaultdict(set)
        for (_, line), name in zip(events, self.m.data_dependent):
            names[line].add(name)
        out = []
        for line, (n, per, loop) in self.repeated(events).items():
            if line in self.rec.backward_lines:
                continue  # the gradient of a forward operation, which is reported at its own line
            ops = ", ".join(sorted(names[line]))
            out.append(self.finding("data-dependent-shape", (
                f"{ops} on {self.device} in every iteration of the loop at line {loop}: the size of its result "
                "depends on the values on the device, so the host waits for the device to know it. Keep shapes fixed: torch.where(mask, x, 0), x * "
                "mask, or a sum divided by mask.sum() instead of boolean indexing."), line))
        return out

    def copies(self):
        out = []
        h2d = [c for c in self.rec.copies if c.kind == "h2d"]
        by_line = defaultdict(list)
        for c in h2d:
            by_line[(c.line, c.fingerprint)].append(c)
        helpers = {}
        for (line, fingerprint), copies in by_line.items():
            if line is None or fingerprint is None or line in helpers:
                continue
            found = self.repeated([(c.step, line) for c in copies])
            if line in found:
                helpers[line] = (copies, found[line][2])
        for line, (copies, loop) in helpers.items():
            c = copies[-1]
            out.append(self.finding("helper-copied-per-step", (
                f"the same values ({size(c.nbytes)}) are made on the CPU and copied to {c.dst} in every iteration "
                f"of the loop at line {loop} ({plural(len(copies), 'copy', 'copies')} of identical data): make this "
                "tensor once, before the loop, directly on the device (device=x.device), or register it as a buffer of the model."), line))
        pageable = {}
        for c in h2d:
            if c.non_blocking and not c.pinned and c.line is not None:
                pageable.setdefault(c.line, []).append(c)
        for line, copies in pageable.items():
            out.append(self.finding("pageable-non-blocking", (
                f"non_blocking=True on {plural(len(copies), 'copy', 'copies')} from pageable (not pinned) memory "
                f"to {copies[0].dst}: such a copy goes through a pinned staging buffer and the host waits for it "
                "anyway. Pin the batches (DataLoader(..., pin_memory=True)) so that non_blocking can overlap."),
                line))
        return out

    def early_reads(self):
        out, seen = [], set()
        for _, read_line, copy_line in self.rec.early_reads:
            if read_line in seen:
                continue
            seen.add(read_line)
            copied = f" ({copy_line})" if copy_line else ""
            out.append(self.finding("early-read", (
                f"reads the result of a non_blocking copy to the host{copied} before anything waited for it: on a "
                "GPU its values may not have arrived yet (here they are NaN). Wait first (an event's synchronize(),"
                " or torch.accelerator.synchronize()), or copy without non_blocking=True."), read_line))
        return out

    def float64(self):
        out = []
        for line, n in self.m.float64_lines.items():  # where float64 came onto the device (grader.engine.instruments)
            if line is None or n <= self.rec.by_design_float64[line]:
                continue  # outside the script, or all of it inside GradScaler (observe.BY_DESIGN)
            out.append(self.finding("float64-on-device", (
                f"makes a float64 tensor on {self.device}: MPS cannot hold float64 (it raises there), and GPUs run "
                "float64 many times slower than float32. Convert where the data comes in: torch.from_numpy(a)"
                ".float(), torch.tensor(..., dtype=torch.float32), or a NumPy array of float32."), line))
        return out

    def left_behind(self):
        out = []
        if self.continued is not None:
            out += placement.findings(self.rec.left_behind, list(self.continued.found.values()),
                                      self.continued.finder, self.path, self.lines, self.device)
        for line, what in self.steps.optimizer_state[:1]:
            out.append(self.finding("optimizer-state-left-behind", (
                f"{what}: the optimizer's state was made or loaded before the model moved, and this step mixes "
                "devices. Move the model first, then create the optimizer, then load its checkpoint (load_state_dict "
                "moves state to each parameter's device)."), line))
        return out

    def memory_kept(self):
        """Tensors of the autograd graph kept from iteration to iteration (a list of losses, a running total that
        requires grad), seen when their loop ended (habits.kept_at_exit): their memory grows every iteration.
        Loops whose graphs an operation carried (graphs_kept) are told there."""
        carried = {self.loops.seen[uid].line for uid in getattr(self, "carried_loops", set())}
        out, seen = [], set()
        for loop_line, line, holder, nbytes in self.rec.kept:
            if loop_line in carried or (holder or (line,))[0] in seen:
                continue
            seen.add((holder or (line,))[0])
            where = f" ({holder[1]})" if holder else ""
            out.append(self.finding("memory-grows", (
                f"tensors made at {line} in earlier iterations of the loop at line {loop_line} were still alive when "
                f"it ended, each with its autograd graph{where}: the device memory of every iteration's graph is "
                "kept, and grows until it runs out. Keep loss.detach() (or loss.item() once, at the end) instead of "
                "the loss itself."), holder[0] if holder else line))
        return out

def holder_line(tensor, scopes, lines):
    """The learner's line that keeps `tensor`: `NAME.append(...)` of the list that holds it, if any."""
    try:
        lists = [r for r in gc.get_referrers(tensor) if isinstance(r, list)]
        names = set()
        for scope in scopes:
            for name, value in list(scope.items()):
                if any(value is lst for lst in lists):
                    names.add(name)
        if not names:
            return None
        tree = ast.parse("\n".join(lines))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("append", "extend") and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in names:
                number = node.lineno
                return (Line(number, lines[number - 1].strip()), f"kept in the list `{node.func.value.id}`")
    except Exception:
        return None
    return None


# -------------------------------------------------------------------------------------------- a crash
def script_frame(exc: BaseException, path: str):
    """The innermost frame of the script's own file in the exception's traceback, and its line number."""
    found = None
    for frame, number in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == path:
            found = (frame, number)
    return found


def _names(code: str) -> list[str]:
    names = []
    for match in re.finditer(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*", code):
        text = match.group(0)
        if text not in names:
            names.append(text)
    return names


def _device_of(value):
    if isinstance(value, torch.Tensor):
        return value.device
    if isinstance(value, torch.nn.Module):
        for p in value.parameters():
            return p.device
    return None


def where_tensors_live(frame, code: str) -> list[tuple[str, torch.device]]:
    """The tensors and modules that the statement names, each with its device (`x`, `self.mask`, `model`)."""
    out = []
    for name in _names(code):
        head, *rest = name.split(".")
        scope = frame.f_locals if head in frame.f_locals else frame.f_globals
        if head not in scope:
            continue
        value = scope[head]
        shown = head
        for attr in rest:
            try:
                value = getattr(value, attr)
            except Exception:
                value = None
                break
            shown += "." + attr
        device = _device_of(value)
        if device is not None and not any(shown == s for s, _ in out):
            out.append((shown, device))
    return out


def crash(exc: BaseException, path: str, lines: list[str], device: str) -> Finding:
    text = f"{type(exc).__name__}: {exc}".strip()
    found = script_frame(exc, path)
    line = None
    if found:
        frame, number = found
        line = Line(number, lines[number - 1].strip() if number <= len(lines) else "")
    devices = {m.group(0) for m in DEVICE.finditer(str(exc))}
    is_mismatch = isinstance(exc, RuntimeError) and MISMATCH.search(str(exc)) and len(devices) >= 2
    if not is_mismatch and "float64" in str(exc) and "MPS" in str(exc):
        return Finding("float64-on-device", f"{text}\nMPS cannot hold float64: convert where the data comes in "
                       "(.float(), dtype=torch.float32, a NumPy array of float32).", path,
                       line.number if line else None, line.code if line else "")
    if not is_mismatch:
        message = f"{text}"
        if isinstance(exc, FileNotFoundError):
            message += ("\nThe script needs a file it cannot find. The doctor runs it from the folder you ran the doctor "
                        "in (reading your files there, writing into a temporary copy): run it from where you run the "
                        "script, or pass the path as an argument.")
        elif isinstance(exc, PermissionError) and "network" in str(exc):
            message += "\nThe doctor runs scripts without network access: download the data first."
        return Finding("crash", message, path, line.number if line else None, line.code if line else "")
    cuda_words = DEVICE.sub(lambda m: ("cuda" if m.group(1) == "sim" else m.group(1))
                            + (f":{m.group(2)}" if m.group(2) else ""), str(exc)) if "sim" in str(exc) else str(exc)
    accelerators = {d for d in devices if not d.startswith(("cpu", "meta"))}
    lost = len(accelerators) >= 2 and "cpu" not in devices
    live = where_tensors_live(found[0], line.code) if found and line else []
    shown = ", ".join(f"`{name}` is on {dev}" for name, dev in live)
    if lost:
        advice = (f"Two accelerators in one operation: a device index was lost on the way. The script's device is "
                  f"{device}; a tensor made with torch.device(x.device.type), .cuda(), \"cuda\" or "
                  "torch.cuda.current_device() lands on the *current* device (index 0) instead. Pass the whole "
                  "device (x.device) along.")
    else:
        others = sorted({str(dev) for _, dev in live} - {device}) or sorted(devices - {device})
        advice = (f"Move the {'one' if len(others) <= 1 else 'ones'} on {' and '.join(others) or 'the CPU'} to "
                  f"{device}: make it there (device=x.device) or move it once with .to(device) where it is made; "
                  "a tensor kept by a module belongs in a registered buffer. If it is there on purpose (a table "
                  f"kept on the CPU), move the others to {' and '.join(others) or 'the CPU'} instead.")
    message = f"{text}\nAs CUDA says it: {cuda_words}" if cuda_words != str(exc) else text
    if shown:
        message += f"\nIn this statement: {shown}."
    message += f"\n{advice}"
    return Finding("lost-index" if lost else "device-mismatch", message, path, line.number if line else None,
                   line.code if line else "")
