"""Every OpInfo operator with a CPU tensor among its device tensors: what CUDA says, and whether the simulator
says the same (tests/simulated/test_cpu_mixes.py). Run in a process of its own, as opinfo_sweep.py is.

Each sample (float32, the first two per operator) with two or more tensor arguments is run on DEVICE with
every tensor there except: one argument as a 0-dim CPU tensor (`scalar@k`), one argument left on the CPU
(`cpu@k`), two of them as 0-dim CPU tensors (`scalars@j,k`), or one argument on the second device, whole
(`other@k`) or as a 0-dim tensor (`scalar_other@k`), the current device staying the first (a model on cuda:0
given a batch on cuda:1). Each outcome is the error (type and message, device type normalised) or the
devices, shapes and dtypes of the result.

    python tests/simulated/mix_sweep.py sim                 # prints {"torch": ..., "results": {key: outcome}}
    python tests/simulated/mix_sweep.py cuda --out FILE --rules grader/simulated/cpu_mixes_cuda.json

On CUDA, `--rules` also records, for each operator the dispatcher ran with CPU and device tensors, what CUDA
said (grader/simulated/recorded_mixes.py reads it).
"""

import argparse
import contextlib
import itertools
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_unflatten  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from grader.simulated import recorded_mixes  # noqa: E402
from tests.simulated.fidelity import error_text, normalise  # noqa: E402

SAMPLES_PER_OP = 2
# _chunk_cat of 0-dim tensors crashes the process on the CPU too; jiterator ops exist on CUDA only.
SKIPPED = ("sparse", "to_sparse", "_chunk_cat", "jiterator")


def outcome(call) -> list:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001
        return [True, type(e).__name__, normalise(error_text(e))[:300]]
    leaves = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    return [False, None, ",".join(f"{normalise(str(t.device))}{tuple(t.shape)}{str(t.dtype)[6:]}" for t in leaves[:4])]


def variants(leaves) -> dict:
    at = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    if len(at) < 2:
        return {}
    found = {f"scalar@{k}": {p: "scalar"} for k, p in enumerate(at)}
    found.update({f"cpu@{k}": {p: "cpu"} for k, p in enumerate(at)})
    found.update({f"other@{k}": {p: "other"} for k, p in enumerate(at)})
    found.update({f"scalar_other@{k}": {p: "scalar_other"} for k, p in enumerate(at)})
    for j, k in itertools.combinations(range(len(at)), 2):
        found[f"scalars@{j},{k}"] = {at[j]: "scalar", at[k]: "scalar"}
    return found


def placed(leaves, where: dict, device: str) -> list:
    other = torch.device(torch.device(device).type, 1)  # the second device, current device staying 0
    out = []
    for i, x in enumerate(leaves):
        if not isinstance(x, torch.Tensor):
            out.append(x)
            continue
        how = where.get(i, "")
        if how.startswith("scalar"):
            x = x.detach().reshape(-1)[:1].reshape(()) if x.numel() else torch.zeros((), dtype=x.dtype)
        target = None if how in ("cpu", "scalar") else other if how.endswith("other") else device
        out.append(x.detach().clone() if target is None else x.detach().to(target))
    return out


class Recorder(TorchDispatchMode):
    """What CUDA said to each op that met CPU and device tensors: key -> [error type, message] or None (ran);
    a key whose calls disagreed maps to False."""

    def __init__(self, device: str):
        super().__init__()
        self.device, self.seen = device, {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        key = recorded_mixes.mix_key(func, args, kwargs)
        try:
            out = func(*args, **kwargs)
        except Exception as e:
            self._note(key, [type(e).__name__, recorded_mixes.template(error_text(e), self.device)])
            raise
        self._note(key, None)
        return out

    def _note(self, key, said) -> None:
        if key is None or key.split("|", 1)[0].split(".")[0] in recorded_mixes.CHOSEN_ABOVE:
            return
        if said is not None and not recorded_mixes.names_the_cpu(said[1]):
            return  # a shape or dtype error, which says nothing of where the tensors may be
        self.seen[key] = said if self.seen.get(key, said) == said else False

    def refusals(self) -> dict:
        """The rules worth keeping: refusals, the same in every call."""
        return {k: v for k, v in sorted(self.seen.items()) if v}


def sweep(device: str, recorder: Recorder | None = None) -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    results = {}
    for op in op_db:
        if op.name.startswith(SKIPPED):
            continue
        try:
            torch.manual_seed(0)
            samples = list(itertools.islice(op.sample_inputs_func(op, "cpu", torch.float32, False), SAMPLES_PER_OP))
        except Exception:  # noqa: BLE001 - no samples for this dtype
            continue
        for n, s in enumerate(samples):
            leaves, spec = tree_flatten(((s.input, *s.args), s.kwargs))
            for name, where in variants(leaves).items():
                def call(where=where):
                    torch.manual_seed(0)
                    args, kwargs = tree_unflatten(placed(leaves, where, device), spec)
                    with recorder if recorder is not None else contextlib.nullcontext():
                        return op(*args, **kwargs)
                results[f"{op.name}.{op.variant_test_name}|{n}|{name}"] = outcome(call)
    return results


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("device", choices=("cuda", "sim"))
    p.add_argument("--out", type=Path, help="write the outcomes here (else print them)")
    p.add_argument("--rules", type=Path, help="CUDA only: write the recorded refusals here")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    if args.device == "sim":
        import grader.simulated as gs

        gs.install(count=2)
    device = f"{args.device}:0"
    recorder = Recorder(device) if args.rules else None
    data = {"torch": torch.__version__, "results": sweep(device, recorder)}
    if args.rules:
        from grader.engine.machine import describe

        m = describe()
        args.rules.write_text(json.dumps({"torch": torch.__version__, "cards": m["gpus"], "driver": m["driver"],
                                          "date": m["date"], "refusals": recorder.refusals()}, indent=0) + "\n")
    text = json.dumps(data)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
