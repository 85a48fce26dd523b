"""Scripts written for CUDA only: finding their lines, and reading them as the simulated device.

A script that says `"cuda"`, `.cuda()` or `torch.cuda.is_available()` runs on the CPU where there is no CUDA
device (an NVIDIA GPU, or an AMD GPU under ROCm), so its device bugs stay hidden there. The doctor reports each
such line (the first finding, with the device-agnostic rewrite), and then runs the script anyway, on the
simulated accelerator, by reading CUDA as it:

* the string `"cuda"` (the device a CUDA script computes on) is `"sim:1"`, the doctor's device; `"cuda:N"` is
  `"sim:N"`; `.cuda()` is `.to("sim:1")`, `.cuda(N)` `.to("sim:N")`;
* `torch.cuda.X` is `torch.sim.X` (the simulator's mirror of torch.cuda: is_available() is True there,
  current_device() is 0, as on a machine with two GPUs);
* `"cuda"` given as a device *type* (`torch.device("cuda", i)`, `torch.autocast("cuda")`,
  `GradScaler("cuda")`, `device_type=`) or compared with one (`device.type == "cuda"`) is `"sim"`; `x.is_cuda`
  is `x.is_sim`. A comparison is a check of the device, not a choice of it: no finding.

The script's arguments are read the same way (`--device cuda` is `--device sim:1`). Only the script's own file
is read so (modules it imports are run as written), and line numbers do not
change: what is reported points at the learner's lines as they are."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from grader.doctor.findings import Finding

_CUDA_STRING = re.compile(r"^cuda(?::(\d+))?$")
_TYPE_TAKERS = {"autocast", "GradScaler", "device"}  # calls whose first argument "cuda" is a device type


@dataclass
class CudaUse:
    line: int
    what: str  # "literal", "is_available", "method", "module"


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is_torch_cuda(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "cuda" and isinstance(node.value, ast.Name)
            and node.value.id == "torch")


_CUDA_PREFIX = re.compile(r"^cuda(?::\d*)?$")  # also f"cuda:{rank}"'s first part


def _compared(tree: ast.AST) -> set[int]:
    """ids of the constants that a comparison tests against (`device.type == "cuda"`): a check, not a choice."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            out.update(id(n) for n in [node.left, *node.comparators] if isinstance(n, ast.Constant))
    return out


def uses(tree: ast.AST) -> list[CudaUse]:
    found = []
    compared = _compared(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CUDA_PREFIX.match(node.value) \
                and id(node) not in compared:
            found.append(CudaUse(node.lineno, "literal"))
        elif isinstance(node, ast.Attribute) and _is_torch_cuda(node.value) and node.attr == "is_available":
            found.append(CudaUse(node.lineno, "is_available"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" \
                and not _is_torch_cuda(node.func):
            found.append(CudaUse(node.lineno, "method"))
    return found


REWRITE = ('device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() '
           'else torch.device("cpu")')


def findings(tree: ast.AST, filename: str, lines: list[str], device: str) -> list[Finding]:
    """One finding per line that ties the script to CUDA, where the doctor runs it elsewhere than on CUDA."""
    by_line: dict[int, set[str]] = {}
    for use in uses(tree):
        by_line.setdefault(use.line, set()).add(use.what)
    out = []
    for number in sorted(by_line):
        whats = by_line[number]
        if "is_available" in whats:
            why = ("`torch.cuda.is_available()` is True only where PyTorch uses CUDA (NVIDIA GPUs, and AMD GPUs "
                   "under ROCm): on a Mac (MPS), an Intel GPU (XPU) or any other accelerator it is False, so this "
                   "script runs on the CPU there")
        elif "method" in whats:
            why = "`.cuda()` moves to a CUDA device only (NVIDIA, or AMD under ROCm): `.to(device)` moves to whichever device was chosen"
        else:
            why = "the string \"cuda\" names a CUDA device only (NVIDIA, or AMD under ROCm): pass one `device`, chosen once, instead"
        out.append(Finding(
            "cuda-only", f"{why}. Choose the device once, for every accelerator:\n    {REWRITE}\n"
            f"Here the doctor runs the script on {device}, reading CUDA as the simulated accelerator "
            "(\"cuda\" is sim:1, torch.cuda is torch.sim).",
            filename, number, lines[number - 1].strip() if number <= len(lines) else "", fix=REWRITE))
    return out


class _AsSimulator(ast.NodeTransformer):
    def __init__(self, main_index: int):
        self.main = f"sim:{main_index}"

    def _device(self, value: str) -> str:
        index = _CUDA_STRING.match(value).group(1)
        return self.main if index is None else f"sim:{index}"

    def visit_Call(self, node: ast.Call):
        name = _call_name(node)
        # "cuda" as a device type: the first argument of torch.device(type, index), autocast, GradScaler
        type_first = name in _TYPE_TAKERS and (name != "device" or len(node.args) > 1)
        for i, arg in enumerate(node.args):
            if i == 0 and type_first and isinstance(arg, ast.Constant) and arg.value == "cuda":
                node.args[0] = ast.copy_location(ast.Constant("sim"), arg)
        for kw in node.keywords:
            if kw.arg == "device_type" and isinstance(kw.value, ast.Constant) and kw.value.value == "cuda":
                kw.value = ast.copy_location(ast.Constant("sim"), kw.value)
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not _is_torch_cuda(node.func):
            # x.cuda() -> x.to("sim:1"); x.cuda(n) -> x.to(f"sim:{n}"); keywords (non_blocking) kept
            target = ast.Constant(self.main)
            args = list(node.args)
            if args:
                index = args.pop(0)
                target = ast.JoinedStr([ast.Constant("sim:"), ast.FormattedValue(index, -1)])
            node.func = ast.copy_location(ast.Attribute(node.func.value, "to", ast.Load()), node.func)
            node.args = [ast.copy_location(target, node)] + args
        return node

    def visit_Compare(self, node: ast.Compare):
        # device.type == "cuda" tests a device type: "sim"
        for i, n in enumerate(node.comparators):
            if isinstance(n, ast.Constant) and n.value == "cuda":
                node.comparators[i] = ast.copy_location(ast.Constant("sim"), n)
        if isinstance(node.left, ast.Constant) and node.left.value == "cuda":
            node.left = ast.copy_location(ast.Constant("sim"), node.left)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant):
        if isinstance(node.value, str) and _CUDA_STRING.match(node.value):
            return ast.copy_location(ast.Constant(self._device(node.value)), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr):
        # f"cuda:{rank}" -> f"sim:{rank}"
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda:"):
            node.values[0] = ast.copy_location(ast.Constant("sim:" + first.value[5:]), first)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if _is_torch_cuda(node):
            node.attr = "sim"
        elif node.attr == "is_cuda":
            node.attr = "is_sim"
        return node


def as_simulator(tree: ast.Module, main_index: int = 1) -> ast.Module:
    """The script's tree with CUDA read as the simulated accelerator (the module docstring), same line numbers."""
    tree = _AsSimulator(main_index).visit(tree)
    return ast.fix_missing_locations(tree)


def as_simulator_args(args: list[str], main_index: int = 1) -> list[str]:
    """The script's arguments with CUDA read as the simulator: "cuda" -> "sim:1", "cuda:N" -> "sim:N", also in
    "--device=cuda"."""
    def one(arg: str) -> str:
        head, eq, value = arg.rpartition("=") if arg.startswith("-") and "=" in arg else ("", "", arg)
        match = _CUDA_STRING.match(value)
        if not match:
            return arg
        return f"{head}{eq}" + (f"sim:{main_index}" if match.group(1) is None else f"sim:{match.group(1)}")
    return [one(a) for a in args]
