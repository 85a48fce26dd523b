"""Every phase of the learner's script runs: each of its loops that does device work is cut after N iterations,
and the script goes on with the code after it (evaluation after training, the resume half of save-and-resume,
a server's requests after its warm-up).

The script's own `for` and `while` statements are rewritten (same line numbers) to run inside a loop of
`Loops`: `for x in it:` becomes `with _loops.enter(LINE) as _doctor_loop_LINE_COL: for x in
_doctor_loop_LINE_COL.over(it):`, and `while test:` tests `_doctor_loop_LINE_COL.more() and (test)`; a list,
set or dict comprehension's first loop iterates `_loops.enter(LINE).comprehension(it)` (a generator
expression, which may run later or never, is left as it is). A loop is
*working* once an iteration called a model at the top level (not a module inside another's forward), ran a
backward, stepped an optimizer, took a DataLoader batch or ran an operation on the device; a working loop ends
after N iterations (its `else:` runs, as when its data ran out). Loops that run inside a module's forward (over
its blocks) are never cut nor counted as steps.

Each event the doctor records carries `Loops.context`: the (loop, iteration) of every loop running, so that a
per-step pattern is counted per iteration of the loop it is in (grader.doctor.analyze)."""

from __future__ import annotations

import ast
import functools
import itertools
import sys
from dataclasses import dataclass, field

import torch

NAME = "_doctor_loops"  # the Loops object, in the script's globals


@dataclass(eq=False)
class Loop:
    uid: int
    line: int
    inside_forward: bool  # entered while a module's forward ran: never cut, never a step
    iteration: int = -1  # the iteration running (0-based); -1 before the first
    working: bool = False
    has_working_child: bool = False  # an epoch's loop around a loop of batches: not itself a step
    cut: bool = False
    loops: "Loops | None" = field(default=None, repr=False)

    # ------------------------------------------------------------------------ the rewritten statement's calls
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.loops._leave(self)
        if self.loops.on_leave is not None and self.is_step and self.iteration >= 1:
            try:
                self.loops.on_leave(self, sys._getframe(1))
            except Exception:
                pass
        return False

    def over(self, iterable):
        return _Over(self, iter(iterable))

    def comprehension(self, iterable):
        """A list, set or dict comprehension's loop: no statement around it to leave by, so it leaves when its
        data runs out, it is cut, or its iterator is dropped (an error inside it)."""
        return _Over(self, iter(iterable), leaves=True)

    def more(self) -> bool:
        return self.loops._next(self)

    @property
    def is_step(self) -> bool:
        return self.working and not self.inside_forward


class _Over:
    __slots__ = ("loop", "it", "leaves")

    def __init__(self, loop: Loop, it, leaves: bool = False):
        self.loop, self.it, self.leaves = loop, it, leaves

    def __iter__(self):
        return self

    def __next__(self):
        try:
            if not self.loop.loops._next(self.loop):
                raise StopIteration
            return next(self.it)
        except StopIteration:
            self._leave()
            raise

    def _leave(self):
        if self.leaves:
            self.leaves = False
            self.loop.__exit__(None, None, None)

    def __del__(self):
        try:
            self._leave()
        except Exception:
            pass


class Loops:
    def __init__(self, limit: int):
        self.limit = limit
        self.active: list[Loop] = []
        self.seen: dict[int, Loop] = {}  # uid -> every loop entered
        self.context: tuple = ()  # ((uid, iteration), ...) of the loops running, outermost first
        self.forward_depth = 0  # modules' forwards running (a model called inside another's forward: > 1)
        self.unmarked = False  # an active loop, outside any forward, is not known to be working yet
        self.on_leave = None  # called with (loop, the frame running it) when a loop of steps ends
        self._uids = itertools.count()

    def enter(self, line: int) -> Loop:
        loop = Loop(next(self._uids), line, self.forward_depth > 0, loops=self)
        self.seen[loop.uid] = loop
        self.active.append(loop)
        self.unmarked = self.unmarked or not loop.inside_forward
        return loop

    def _leave(self, loop: Loop) -> None:
        for i in range(len(self.active) - 1, -1, -1):
            if self.active[i] is loop:
                del self.active[i]
                break
        self._refresh()

    def _next(self, loop: Loop) -> bool:
        """Start the loop's next iteration, or cut it (False) after `limit` if it works on the device."""
        if loop.iteration + 1 >= self.limit and loop.working and not loop.inside_forward:
            loop.cut = True
            return False
        loop.iteration += 1
        self._refresh()
        return True

    def _refresh(self) -> None:
        self.context = tuple((lp.uid, lp.iteration) for lp in self.active)

    def work(self) -> None:
        """Something that makes a loop a working one happened: mark the loops running (outside any forward)."""
        if self.unmarked:
            outside = [loop for loop in self.active if not loop.inside_forward]
            for loop in outside:
                loop.working = True
            for loop in outside[:-1]:
                loop.has_working_child = True
            self.unmarked = False

    def step_loop(self, context: tuple):
        """The innermost working loop (outside any forward) of an event's context, and its iteration, if it is a
        loop of steps (no working loop inside it: the event is not in an epoch's loop, between its batches)."""
        for uid, iteration in reversed(context):
            loop = self.seen[uid]
            if loop.is_step and iteration >= 0:
                return None if loop.has_working_child else (loop, iteration)
        return None

    def report(self) -> list[dict]:
        """Each loop line that was cut: how many times it was entered and cut, and after how many iterations."""
        by_line: dict[int, dict] = {}
        for loop in self.seen.values():
            if loop.cut:
                entry = by_line.setdefault(loop.line, {"line": loop.line, "cut": 0, "after": self.limit})
                entry["cut"] += 1
        return sorted(by_line.values(), key=lambda e: e["line"])

    # ------------------------------------------------------------------------ what makes a loop working
    def install(self):
        """Watch models' forwards and backwards (optimizer steps, DataLoader batches and device operations call
        `work` from grader.doctor.steps and grader.doctor.observe). Returns the undo list."""
        loops = self
        module_call = torch.nn.Module.__call__

        @functools.wraps(module_call)
        def __call__(module, *args, **kwargs):
            if loops.forward_depth == 0:
                loops.work()
            loops.forward_depth += 1
            try:
                return module_call(module, *args, **kwargs)
            finally:
                loops.forward_depth -= 1

        backward = torch.autograd.backward

        @functools.wraps(backward)
        def autograd_backward(*args, **kwargs):
            loops.work()
            return backward(*args, **kwargs)

        torch.nn.Module.__call__ = __call__
        torch.autograd.backward = autograd_backward
        return [(torch.nn.Module, "__call__", module_call), (torch.autograd, "backward", backward)]


# ---------------------------------------------------------------------------------------- the rewrite
class _Rewrite(ast.NodeTransformer):
    def _wrap(self, node, loop_name: str):
        enter = ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), "enter", ast.Load()),
                         [ast.Constant(node.lineno)], [])
        with_ = ast.With([ast.withitem(enter, ast.Name(loop_name, ast.Store()))], [node])
        return ast.copy_location(with_, node)

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        if _yields(node):
            return node
        name = f"_doctor_loop_{node.lineno}_{node.col_offset}"
        node.iter = ast.copy_location(ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "over", ast.Load()),
                                               [node.iter], []), node.iter)
        return self._wrap(node, name)

    def _comprehension(self, node):
        self.generic_visit(node)
        first = node.generators[0]  # evaluated where the comprehension is, once: its loop is the one to cut
        enter = ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), "enter", ast.Load()),
                         [ast.Constant(node.lineno)], [])
        first.iter = ast.copy_location(ast.Call(ast.Attribute(enter, "comprehension", ast.Load()), [first.iter], []),
                                       first.iter)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        if _yields(node):
            return node
        name = f"_doctor_loop_{node.lineno}_{node.col_offset}"
        more = ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "more", ast.Load()), [], [])
        node.test = ast.copy_location(ast.BoolOp(ast.And(), [more, node.test]), node.test)
        return self._wrap(node, name)


def _yields(loop) -> bool:
    """A generator's loop (it yields in its body): left as it is, since it runs only as its consumer's loop asks;
    while it is suspended it would seem to be running around whatever the consumer does."""
    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom, ast.Await)) or walk(child):
                return True
        return False
    return walk(loop)


def rewrite(tree: ast.Module) -> ast.Module:
    """The script's tree with each loop run by Loops (the module docstring); line numbers kept."""
    tree = _Rewrite().visit(tree)
    return ast.fix_missing_locations(tree)
