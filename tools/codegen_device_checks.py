"""Which CUDA kernels check their tensors' devices in generated code, and in what words: the simulator's table.

A CUDA kernel without `device_check: NoCheck` in PyTorch's native_functions.yaml is wrapped by generated code
that compares the device of each tensor argument (out= first, then the positional ones) with the first one's,
and fails with "Expected all tensors to be on the same device, but got <arg> is on X, different from other
tensors on Y (when checking argument in method wrapper_CUDA_<...>)". Unlike TensorIterator's check, it lets
no 0-dim CPU tensor through. This script runs PyTorch's own code generator (torchgen, shipped in the torch
wheel) for the CUDA dispatch key and reads, from the C++ it writes, each operator's wrapper and the arguments
it checks, in order:

    python tools/codegen_device_checks.py            # writes grader/simulated/codegen_checks.json
    python tools/codegen_device_checks.py --check    # exit 1 if that file is not what this torch generates

The table is generated, not hand-written, so that the simulator words every such error as CUDA does; each
entry the fidelity suite tries on a real GPU confirms it (tests/simulated/fidelity.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "grader" / "simulated" / "codegen_checks.json"
_CHECK = re.compile(r'check_and_update_common_device\(common_device, \w+, "(\w+)", "(\w+)"\)')
_REGISTRATION = re.compile(r'm\.impl\("([\w.]+)",\s*TORCH_FN\((\w+)\)')
PREFIX = "wrapper_CUDA_"


def generate() -> dict:
    import torch
    import torchgen
    from torchgen import dest
    from torchgen import gen as torchgen_gen
    from torchgen.model import DispatchKey
    from torchgen.selective_build.selector import SelectiveBuilder
    from torchgen.utils import Target

    native = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    parsed = torchgen_gen.parse_native_yaml(str(native / "native_functions.yaml"), str(native / "tags.yaml"))
    grouped = torchgen_gen.get_grouped_native_functions(parsed.native_functions)
    cuda = parsed.backend_indices[DispatchKey.CUDA]

    def emit(target) -> str:
        gen = dest.RegisterDispatchKey(cuda, target, SelectiveBuilder.get_nop_selector(), rocm=False, symint=True,
                                       class_method_name=None, skip_dispatcher_op_registration=False)
        return "\n".join(line for f in grouped for line in gen(f))

    checked = collections.defaultdict(list)
    for wrapper, arg in _CHECK.findall(emit(Target.ANONYMOUS_DEFINITION)):
        checked[wrapper].append(arg)
    ops = {}
    for op, wrapper in _REGISTRATION.findall(emit(Target.REGISTRATION)):
        if wrapper in checked and wrapper.startswith(PREFIX):
            ops[op] = [wrapper[len(PREFIX):], checked[wrapper]]

    def kernel(key, f) -> bool:
        return key in parsed.backend_indices and parsed.backend_indices[key].has_kernel(f)

    composite = (DispatchKey.CompositeExplicitAutograd, DispatchKey.CompositeExplicitAutogradNonFunctional,
                 DispatchKey.CompositeImplicitAutograd)
    cpu_only = []
    for f in parsed.native_functions:
        if cuda.has_kernel(f):
            continue
        if kernel(DispatchKey.CompositeExplicitAutograd, f):
            # CUDA runs the composite kernel, which calls the in-place or out= variant: that one's check decides
            # the message (masked_scatter -> masked_scatter_, complex -> complex.out). The arguments the
            # composite makes itself (the result) are left out.
            names = {a.name for a in f.func.arguments.flat_positional}
            base, overload = f.func.name.name.base, f.func.name.overload_name
            for variant in (f"{base}_", base):
                for key in (f"{variant}.{overload}" if overload else variant, f"{variant}.out"):
                    if key in ops and key != str(f.func.name):
                        ops.setdefault(str(f.func.name), [ops[key][0], [n for n in ops[key][1] if n in names]])
        elif f.structured_delegate is None and not any(kernel(k, f) for k in composite) and kernel(DispatchKey.CPU, f):
            cpu_only.append(str(f.func.name))  # CUDA has no kernel for it: NotImplementedError there
    return {"torch": torch.__version__.split("+")[0], "ops": dict(sorted(ops.items())), "cpu_only": sorted(cpu_only)}


def render(table: dict) -> str:
    """JSON with one operator per line, so that a new torch's changes read as a short diff."""
    ops = ",\n".join(f"  {json.dumps(op)}: {json.dumps(entry)}" for op, entry in table["ops"].items())
    return (f'{{"torch": {json.dumps(table["torch"])}, "cpu_only": {json.dumps(table["cpu_only"])}, '
            f'"ops": {{\n{ops}\n}}}}\n')


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    args = p.parse_args()
    table = generate()
    text = render(table)
    if args.check:
        current = TABLE.read_text() if TABLE.exists() else ""
        if current != text:
            print(f"{TABLE.relative_to(ROOT)} is not what torch {table['torch']} generates: run "
                  "python tools/codegen_device_checks.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text)
    print(f"{TABLE.relative_to(ROOT)}: {len(table['ops'])} operators (torch {table['torch']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
