"""Every device mismatch in one run: an operation whose tensors are on two devices is recorded, then run again
with the stray operands moved to the operation's device (for this operation only), so that the script goes on
and its later bugs show too. The moved copies are marked (`Recorder.repairing`) so that they are not counted as
the script's own traffic.

Each mismatch is traced to the line to fix: the statement that made or assigned the stray tensor (a factory call
in `forward`, a plain attribute `self.prior = ...`, a batch dict moved whole), found by the name under which the
failing statement holds it, followed through the script's own calls (a parameter of `forward` to the caller's
argument). The use stays a related location."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree

from grader.engine.instruments import Line

DEVICE = re.compile(r"\b(cpu|cuda|sim|mps|meta|xpu)(?::(\d+))?\b")
MISMATCH = re.compile(r"(same device|to be on|on the same|device mismatch|but got .* device|devices?,)", re.I)


def is_mismatch(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, RuntimeError) and bool(MISMATCH.search(text)) and len(
        {m.group(0) for m in DEVICE.finditer(text)}) >= 2


@dataclass
class Stray:
    name: str  # as the statement names it: `self.prior`, `causal`, `batch`
    device: str
    made: Line | None  # where it was created or assigned
    via: list = field(default_factory=list)  # Lines of the calls followed back to `made`
    module: bool = False  # a module (its parameters are the operands), not a tensor
    table: bool = False  # an embedding table: often kept on the CPU on purpose (too large for the device)


@dataclass
class Mismatch:
    line: Line | None  # the use
    error: str
    target: str  # the device the operation ran on once continued
    strays: list[Stray]
    others: list[Stray]  # the operands already on the target device
    stray_ids: set
    count: int = 1


class Continue(TorchFunctionMode):
    """Run each torch function; on a device mismatch, record it and run it again with the strays moved."""

    def __init__(self, rec, script: str, tree: ast.Module, lines: list[str]):
        super().__init__()
        self.rec, self.script, self.lines = rec, script, lines
        self.finder = Assignments(tree)
        self.found: dict = {}  # (use line, made lines) -> Mismatch
        self.not_continued: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except RuntimeError as exc:
            if not is_mismatch(exc):
                raise
            try:
                out = self._continue(func, args, kwargs, exc)
            except Exception:
                out = None
            if out is None:
                raise
            return out[0]

    def _continue(self, func, args, kwargs, exc):
        flat, spec = _pytree.tree_flatten((args, kwargs))
        tensors = [t for t in flat if isinstance(t, torch.Tensor)]
        target = self._target(func, args, tensors)
        if target is None:
            return None
        strays = {id(t): t for t in tensors if _stray(t, target)}
        if not strays:
            return None
        self.rec.repairing += 1
        try:
            moved = [t.to(target) if isinstance(t, torch.Tensor) and id(t) in strays else t for t in flat]
            new_args, new_kwargs = _pytree.tree_unflatten(moved, spec)
        finally:
            self.rec.repairing -= 1
        out = func(*new_args, **new_kwargs)
        self._record(exc, target, strays, tensors)
        return (out,)

    def _target(self, func, args, tensors):
        name = getattr(func, "__name__", "")
        if name.endswith("_") and not name.endswith("__") and args and isinstance(args[0], torch.Tensor):
            return args[0].device  # an in-place operation: its result stays where its tensor is
        devices = [t.device for t in tensors if not (t.device.type == "cpu" and t.dim() == 0)]
        if self.rec.device in devices:
            return self.rec.device
        accelerators = [d for d in devices if d.type != "cpu"]
        return accelerators[0] if accelerators else None

    def _record(self, exc, target, strays: dict, tensors) -> None:
        frame = learner_frame(self.script)
        use = _line(frame, self.lines) if frame else None
        named = named_tensors(frame, self.lines[frame.f_lineno - 1] if frame else "")
        found, others, covered = [], [], set()
        for name, value in named:
            ids = _ids(value)
            if ids & set(strays) and not ids <= covered:
                covered |= ids
                made, via = self.finder.origin(frame, name, self.lines, self.script)
                device = next(str(strays[i].device) for i in ids if i in strays)
                found.append(Stray(name, device, made, via, isinstance(value, torch.nn.Module),
                                   isinstance(value, (torch.nn.Embedding, torch.nn.EmbeddingBag))))
            elif any(isinstance(v, torch.Tensor) and v.device == target for v in _leaves(value)) \
                    and not any(name.startswith(o.name + ".") for o in others):
                made, via = self.finder.origin(frame, name, self.lines, self.script)
                others.append(Stray(name, str(target), made, via, isinstance(value, torch.nn.Module)))
        if not found:
            # the operation that failed got a tensor made from the statement's (a mask converted inside
            # nn.MultiheadAttention): the statement's tensors on the strays' device are what to move
            stray_devices = {t.device for t in strays.values()}
            for name, value in named:
                leaves = [t for t in _leaves(value) if t.device in stray_devices and not (t.device.type == "cpu"
                                                                                          and t.dim() == 0)]
                if leaves and not any(name.startswith(s.name + ".") for s in found):
                    made, via = self.finder.origin(frame, name, self.lines, self.script)
                    found.append(Stray(name, str(leaves[0].device), made, via, isinstance(value, torch.nn.Module),
                                       isinstance(value, (torch.nn.Embedding, torch.nn.EmbeddingBag))))
        key = (use, tuple(s.made for s in found))
        if key in self.found:
            self.found[key].count += 1
            return
        text = f"{type(exc).__name__}: {exc}".strip()
        self.found[key] = Mismatch(use, text, str(target), found, others, set(strays))


def _stray(t: torch.Tensor, target: torch.device) -> bool:
    return t.device != target and not (t.device.type == "cpu" and t.dim() == 0)


def _leaves(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, torch.nn.Module):
        yield from value.parameters()
        yield from value.buffers()
    elif isinstance(value, dict):
        for v in value.values():
            if isinstance(v, torch.Tensor):
                yield v
    elif isinstance(value, (list, tuple)):
        for v in value:
            if isinstance(v, torch.Tensor):
                yield v
            elif isinstance(v, torch.nn.Module):
                yield from _leaves(v)


def _ids(value) -> set:
    return {id(t) for t in _leaves(value)}


def learner_frame(script: str):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != script:
        frame = frame.f_back
    return frame


def _line(frame, lines: list[str]) -> Line:
    number = frame.f_lineno
    return Line(number, lines[number - 1].strip() if number <= len(lines) else "")


_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def named_tensors(frame, code: str) -> list[tuple[str, object]]:
    """(name, value) of what the statement names (`x`, `self.mask`, `batch`), as the frame holds them."""
    out, seen = [], set()
    if frame is None:
        return out
    for match in _NAME.finditer(code):
        head, *rest = match.group(0).split(".")
        scope = frame.f_locals if head in frame.f_locals else frame.f_globals
        if head not in scope:
            continue
        value, shown = scope[head], head
        for attr in rest:
            try:
                attr_value = getattr(value, attr)
            except Exception:
                break
            if callable(attr_value) and not isinstance(attr_value, torch.nn.Module):
                break  # a method (`x.masked_fill`): what it is called on is the operand
            value, shown = attr_value, shown + "." + attr
        if shown not in seen and (isinstance(value, (torch.Tensor, torch.nn.Module, dict, list, tuple))):
            seen.add(shown)
            out.append((shown, value))
    # the longest name first: `self.prior` before `self`
    return sorted(out, key=lambda item: -item[0].count("."))


class Assignments:
    """Where a name the script uses got its value: the assignment in the same function (or, for `self.NAME`, in
    the class's methods), following a function's parameter to the caller's argument."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.functions = {}  # first line (def or first decorator) -> FunctionDef
        self.classes = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self.functions[first] = node
            elif isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)

    def origin(self, frame, name: str, lines: list[str], script: str, depth: int = 0):
        """(Line where `name` was made or assigned, [Lines of calls followed]); (None, []) if not found."""
        head, *rest = name.split(".")
        use = frame.f_lineno
        if head == "self" and rest:
            self_value = frame.f_locals.get("self")
            number = self._attribute(type(self_value), rest[0]) if self_value is not None else None
            return (Line(number, lines[number - 1].strip()) if number else None), []
        body = self._body(frame)
        if body is None:
            return None, []
        stmt = _last_binding(body, head, use)
        via = []
        # `for ids in batch["ids"].split(4):` binds what the iterable held: follow it to where that was made
        while isinstance(stmt, (ast.For, ast.AsyncFor)) and _root(stmt.iter) and len(via) < 4:
            earlier = _last_binding(body, _root(stmt.iter), stmt.lineno)
            if earlier is None:
                break
            via.append(Line(stmt.lineno, lines[stmt.lineno - 1].strip()))
            stmt = earlier
        code = frame.f_code
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if stmt is None and body is not self.tree and head not in params and head not in frame.f_locals:
            stmt = _last_binding(self.tree, head, len(lines) + 1)  # a global of the script
        number = stmt.lineno if stmt is not None else None
        if number is None and head in params and depth < 4:
            caller = frame.f_back
            while caller is not None and caller.f_code.co_filename != script:
                caller = caller.f_back
            if caller is not None:
                value = frame.f_locals.get(head)
                ids = _ids(value)
                for other, other_value in named_tensors(caller, lines[caller.f_lineno - 1]):
                    if ids and ids <= _ids(other_value) or other_value is value:
                        made, via = self.origin(caller, other, lines, script, depth + 1)
                        if made is not None:
                            return made, [_line(caller, lines)] + via
        if number is None:
            return None, []
        return Line(number, lines[number - 1].strip()), via

    def _body(self, frame):
        code = frame.f_code
        if code.co_name == "<module>":
            return self.tree
        return self.functions.get(code.co_firstlineno)

    def _attribute(self, cls, attr: str):
        """The line of `self.ATTR = ...` in the script's class `cls` or its bases (in __init__ first)."""
        for klass in getattr(cls, "__mro__", ()):
            node = self.classes.get(klass.__name__)
            if node is None:
                continue
            found = []
            for method in node.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for stmt in ast.walk(method):
                    for target in _targets(stmt):
                        for t in _flat_targets(target):
                            if isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) \
                                    and t.value.id == "self":
                                found.append((method.name != "__init__", stmt.lineno))
            if found:
                return min(found)[1]
        return None


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    if isinstance(stmt, ast.NamedExpr):
        return [stmt.target]
    return []


def _flat_targets(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _flat_targets(t)
    elif isinstance(target, ast.Starred):
        yield from _flat_targets(target.value)
    else:
        yield target


def _statements(body):
    """Every statement of a function or module body, not those of functions or classes defined inside."""
    stack = list(body.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _root(node):
    """The name an expression starts from: `batch` of batch["ids"].split(4)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return None


def _last_binding(body, name: str, use: int):
    """The last statement before line `use` that binds `name` (else the last one after it: a loop's next
    iteration), in `body`; None."""
    found = []
    for stmt in _statements(body):
        for target in _targets(stmt):
            if any(isinstance(t, ast.Name) and t.id == name for t in _flat_targets(target)):
                found.append(stmt)
    before = [s for s in found if s.lineno < use]
    if before:
        return max(before, key=lambda s: s.lineno)
    return max(found, key=lambda s: s.lineno) if found else None
