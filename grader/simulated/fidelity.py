"""Fidelity suite: the same small snippets run on a real device and on the sim.

Each case is a function taking a device string ("cuda", "sim", ...) and
returning a small value (or raising).  ``run_all(device_type)`` records per
case whether it raised, the exception type, the message with the device type
normalised to ``<dev>``, and a value summary.

    python -m grader.simulated.fidelity --device cuda --out fidelity_cuda.json
    python -m grader.simulated.fidelity --device sim --markdown
    python -m grader.simulated.fidelity --markdown-from grader/simulated/fidelity_cuda.json

Cases marked ``needs_2`` are recorded as skipped where fewer than two devices
exist.  The committed real-GPU table is ``grader/simulated/fidelity_cuda.json``;
``tests/simulated/test_fidelity.py`` compares the simulator against it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile

import torch

CASES: list = []  # (name, fn, needs_2)

_DEV_RE = re.compile(r"(?i)(?<![a-z])(cuda|sim|mps|privateuseone)(?![a-z])")


def normalise(text: str) -> str:
    """Replace the device type by ``<dev>`` (cuda:0 -> <dev>:0, torch.cuda.X -> torch.<dev>.X)."""
    text = _DEV_RE.sub("<dev>", text)
    # C++ exception texts may end with a source location on some builds
    return text.strip()


def case(name, needs_2=False):
    def deco(fn):
        CASES.append((name, fn, needs_2))
        return fn

    return deco


def _summ(v):
    if isinstance(v, torch.Tensor):
        s = f"tensor{tuple(v.shape)} {str(v.dtype).replace('torch.', '')} on {normalise(str(v.device))}"
        if v.numel() <= 8 and v.device.type == "cpu" and not v.requires_grad:
            s += " " + str([round(float(x), 4) for x in v.flatten().tolist()])
        return s
    if isinstance(v, float):
        return repr(round(v, 4))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_summ(x) for x in v) + "]"
    if isinstance(v, torch.device):
        return normalise(str(v))
    return normalise(repr(v))


# ---------------------------------------------------------------- placement
@case("mix device with cpu tensor")
def _c_mix(dev):
    return torch.ones(3, device=dev) + torch.ones(3)


@case("mix cpu with device tensor")
def _c_mix_rev(dev):
    return torch.ones(3) + torch.ones(3, device=dev)


@case("in-place cpu += device tensor")
def _c_mix_inplace(dev):
    x = torch.ones(3)
    x += torch.ones(3, device=dev)
    return x


@case("mix :0 with :1", needs_2=True)
def _c_mix01(dev):
    return torch.ones(3, device=f"{dev}:0") + torch.ones(3, device=f"{dev}:1")


@case("mix :1 with :0", needs_2=True)
def _c_mix10(dev):
    return torch.ones(3, device=f"{dev}:1") * torch.ones(3, device=f"{dev}:0")


@case("0-dim cpu scalar mixes")
def _c_scalar(dev):
    return torch.ones(3, device=dev) * torch.tensor(2.0)


@case("1-element 1-dim cpu tensor does not mix")
def _c_one_elem(dev):
    return torch.ones(3, device=dev) * torch.tensor([2.0])


@case("matmul device @ cpu")
def _c_matmul(dev):
    return torch.ones(2, 3, device=dev) @ torch.ones(3, 2)


@case("Linear on device, input on cpu")
def _c_linear_cpu_input(dev):
    return torch.nn.Linear(3, 2).to(dev)(torch.ones(4, 3))


@case("Linear on cpu, input on device")
def _c_linear_dev_input(dev):
    return torch.nn.Linear(3, 2)(torch.ones(4, 3, device=dev))


@case("Conv2d on device, input on cpu")
def _c_conv_cpu_input(dev):
    return torch.nn.Conv2d(1, 2, 3).to(dev)(torch.ones(1, 1, 5, 5))


@case("Conv2d on cpu, input on device")
def _c_conv_dev_input(dev):
    return torch.nn.Conv2d(1, 2, 3)(torch.ones(1, 1, 5, 5, device=dev))


@case("Embedding on device, cpu indices")
def _c_embedding(dev):
    return torch.nn.Embedding(5, 2).to(dev)(torch.tensor([1, 2]))


@case("cross_entropy cpu target")
def _c_ce_cpu_target(dev):
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3, device=dev), torch.tensor([0, 1]))


@case("cpu index into device tensor")
def _c_cpu_index(dev):
    return torch.arange(5.0, device=dev)[torch.tensor([1, 3])].cpu()


@case("cpu mask into device tensor")
def _c_cpu_mask(dev):
    x = torch.arange(4.0, device=dev)
    return x[torch.tensor([True, False, True, False])].cpu()


@case("device index into cpu tensor")
def _c_dev_index(dev):
    return torch.arange(5.0)[torch.tensor([1, 3], device=dev)]


@case("numpy on device tensor")
def _c_numpy(dev):
    return torch.ones(2, device=dev).numpy()


@case("torch.tensor of device scalars")
def _c_tensor_of_scalars(dev):
    a = torch.tensor(1.5, device=dev)
    b = torch.tensor(2.5, device=dev)
    return torch.tensor([a, b])


@case("torch.tensor of device scalars with device=")
def _c_tensor_of_scalars_dev(dev):
    a = torch.tensor(1.5, device=dev)
    return torch.tensor([a, a], device=dev)


@case("torch.stack of device scalars")
def _c_stack(dev):
    return torch.stack([torch.tensor(1.0, device=dev), torch.tensor(2.0, device=dev)])


@case("float() of device scalar")
def _c_float(dev):
    return float(torch.tensor(3.25, device=dev))


@case("item of device tensor")
def _c_item(dev):
    return torch.ones(1, device=dev).sum().item()


@case("tolist of device tensor")
def _c_tolist(dev):
    return torch.arange(3.0, device=dev).tolist()


@case("invalid device index")
def _c_invalid_index(dev):
    return torch.zeros(1, device=f"{dev}:7")


@case("load checkpoint with map_location cpu")
def _c_load_map(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2, device=dev)}, buf)
    buf.seek(0)
    return torch.load(buf, map_location="cpu")["w"]


@case("load checkpoint without map_location")
def _c_load_nomap(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2, device=dev)}, buf)
    buf.seek(0)
    return torch.load(buf)["w"]


@case("load checkpoint without map_location where device is missing")
def _c_load_missing(dev):
    """Saved here, loaded in a subprocess without the device (CUDA hidden /
    sim not installed); re-raises what the subprocess got."""
    fd, path = tempfile.mkstemp(suffix=".pt")
    os.close(fd)
    try:
        torch.save({"w": torch.ones(2, device=dev)}, path)
        code = (
            "import json, torch\n"
            "try:\n"
            f"    torch.load({path!r})\n"
            "    print(json.dumps(None))\n"
            "except Exception as e:\n"
            "    print(json.dumps([type(e).__name__, str(e)]))\n"
        )
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        out = json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(path)
    if out is None:
        return "loaded"
    exc = {"RuntimeError": RuntimeError, "TypeError": TypeError, "ValueError": ValueError}.get(out[0], RuntimeError)
    raise exc(out[1])


# ---------------------------------------------------------------- works on device
@case("Linear forward")
def _c_linear(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2).to(dev)
    return m(torch.ones(3, 4, device=dev)).sum().item()


@case("backward")
def _c_backward(dev):
    torch.manual_seed(0)
    w = torch.ones(3, device=dev, requires_grad=True)
    (w * torch.arange(3.0, device=dev)).sum().backward()
    return w.grad


@case("backward on :1", needs_2=True)
def _c_backward1(dev):
    w = torch.ones(3, device=f"{dev}:1", requires_grad=True)
    (w * 2).sum().backward()
    return w.grad


@case("to between :0 and :1", needs_2=True)
def _c_to01(dev):
    return torch.ones(2, device=f"{dev}:0").to(f"{dev}:1") + torch.ones(2, device=f"{dev}:1")


@case("Adam step keeps state on device")
def _c_adam(dev):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(2, 3, device=dev)).sum().backward()
    opt.step()
    return [v.device for v in opt.state[m.weight].values() if isinstance(v, torch.Tensor) and v.dim() > 0]


@case("non_blocking to cpu then sync")
def _c_nb_sync(dev):
    x = torch.arange(4.0, device=dev)
    y = x.to("cpu", non_blocking=True)
    getattr(torch, dev).synchronize()
    return [y, y.is_pinned()]


@case("pin_memory and is_pinned")
def _c_pin(dev):
    return [torch.ones(2).pin_memory().is_pinned(), torch.ones(2).is_pinned()]


@case("current_accelerator")
def _c_accel(dev):
    return torch.accelerator.current_accelerator()


@case("bool of multi-element device tensor")
def _c_bool_multi(dev):
    return bool(torch.ones(2, device=dev))


@case("item of multi-element device tensor")
def _c_item_multi(dev):
    return torch.ones(2, device=dev).item()


def device_count(device_type: str) -> int:
    mod = getattr(torch, device_type, None)
    try:
        return int(mod.device_count()) if mod is not None else 0
    except Exception:
        return 0


def run_case(name, fn, needs_2, device_type, n_dev):
    row = {"case": name, "needs_2_devices": needs_2}
    if needs_2 and n_dev < 2:
        row.update(skipped=f"needs 2 devices, {device_type} has {n_dev}")
        return row
    try:
        v = fn(device_type)
        row.update(raised=False, exc_type=None, message=None, value=_summ(v))
    except Exception as e:  # noqa: BLE001
        msg = str(e).split("\nCUDA kernel errors")[0].split("\n(simulated device")[0]
        row.update(raised=True, exc_type=type(e).__name__, message=normalise(msg), value=None)
    return row


def run_all(device_type: str) -> list[dict]:
    n_dev = device_count(device_type)
    return [run_case(n, f, two, device_type, n_dev) for n, f, two in CASES]


def to_markdown(rows: list[dict], title: str = "") -> str:
    out = [f"### {title}\n"] if title else []
    out.append("| case | 2 dev | raised | type | message / value |\n|---|---|---|---|---|\n")
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['case']} | {'yes' if r['needs_2_devices'] else ''} | skipped | | {r['skipped']} |\n")
            continue
        text = r["message"] if r["raised"] else r["value"]
        text = (text or "").replace("|", "\\|").replace("\n", " ")
        if len(text) > 200:
            text = text[:200] + "..."
        out.append(
            f"| {r['case']} | {'yes' if r['needs_2_devices'] else ''} | {'yes' if r['raised'] else 'no'} "
            f"| {r['exc_type'] or ''} | {text} |\n"
        )
    return "".join(out)


def machine(device_type: str) -> dict:
    """Which cards, driver, Python and date produced a table: kept with the outcomes."""
    from grader.machine import describe as describe_machine

    m = describe_machine()
    info = {"python": m["python"], "date": m["date"]}
    if device_type == "cuda" and m["gpus"]:
        info.update(cards=m["gpus"], cuda=m["cuda"], driver=m["driver"])
    return info


def describe(data: dict) -> str:
    cards = ", ".join(data.get("cards", [])) or data["device"]
    extra = f", driver {data['driver']}, CUDA {data['cuda']}" if data.get("driver") else ""
    return (f"{cards} ({data['device_count']} device(s){extra}, torch {data['torch']}, "
            f"Python {data.get('python', '?')}, {data.get('date', '?')})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="device type: cuda, sim, mps ...")
    ap.add_argument("--count", type=int, default=2, help="sim only: number of devices")
    ap.add_argument("--out", help="write the JSON table here")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--markdown-from", help="render an existing JSON table as markdown")
    args = ap.parse_args(argv)
    if args.markdown_from:
        with open(args.markdown_from) as f:
            data = json.load(f)
        print(to_markdown(data["rows"], describe(data)))
        return 0
    if args.device == "sim":
        import grader.simulated as gs

        gs.install(count=args.count)
    rows = run_all(args.device)
    data = {
        "device": args.device,
        "device_count": device_count(args.device),
        "torch": torch.__version__,
        **machine(args.device),
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
    if args.markdown or not args.out:
        print(to_markdown(rows, describe(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
