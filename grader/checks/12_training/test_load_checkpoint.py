"""Grader for load_checkpoint: a checkpoint saved on one device must load onto any other with map_location,
without touching the device that saved it, and without running code from the file (weights_only)."""

import linecache
import tempfile
from pathlib import Path

import torch
from torch import nn

from grader.engine.expect import GradeFailure, canonical, expect_close, fail, measure, running

FIX = ("pass map_location to torch.load: torch.load(path, map_location='cpu', weights_only=True), then "
       "load_state_dict into the model on `device` (or map straight to `device`).")
# Where the file does pass a map_location (read from its source, for the message only) and the tensors still go to
# the device that saved them, the map is what is wrong, not its absence.
MAPPED = ("torch.load was given a map_location, but it did not cover this checkpoint: a device without its index "
          "('sim', 'cuda', device.type, current_accelerator()) means the current device, and a dict maps only the "
          "devices it names (a checkpoint saved on {saved_on} is not mapped by {{'cuda:0': ...}}). Map to the "
          "target itself, map_location=device (or 'cpu' and move the model), with weights_only=True.")
MARKS = []


def fix_for(submission, saved_on) -> str:
    source = "".join(linecache.getlines(submission.filename))
    return MAPPED.format(saved_on=saved_on) if "map_location" in source else FIX


def _payload_ran():
    MARKS.append("ran")
    return "harmless"


class Payload:
    def __reduce__(self):
        return (_payload_ran, ())


def reference_net():
    body = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU())
    net = nn.Module()
    net.body, net.head = body, nn.Linear(32, 4)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_()
        body[1].running_mean.normal_()
        body[1].running_var.uniform_(0.5, 2.0)
        body[1].num_batches_tracked.fill_(torch.randint(1, 100, ()).item())
    return net.eval()


def expected_output(net, x):
    with torch.no_grad():
        return net.head(net.body(x))


def save_from(device, folder):
    net = reference_net()
    path = Path(folder) / "checkpoint.pt"
    state = {k: v.to(device) for k, v in net.state_dict().items()}
    torch.save(state, path)
    return net, path, state


def memory_on(device):
    if device.type == "cpu":
        return 0
    return int(torch.get_device_module(device).memory_allocated(device))


def load(submission, path, target, saved_on):
    with running(f"load_for_eval(path, {str(target)!r}) of a checkpoint saved on {saved_on}", submission,
                 explain_device_error=f"the tensors were restored to {saved_on}, where they were saved: "
                                      f"{fix_for(submission, saved_on)}"):
        return submission.load_for_eval(str(path), target)


def check_loaded(model, net, target, saved_on):
    if not isinstance(model, nn.Module):
        fail(f"load_for_eval should return the model, got {type(model).__name__}.")
    where = {canonical(t.device) for t in list(model.parameters()) + list(model.buffers())}
    if where != {canonical(target)}:
        fail(f"the model load_for_eval returned has tensors on {', '.join(sorted(map(str, where)))}, but it should "
             f"be on {target}: load the weights, then make sure the model is on `device`.")
    training = [name or "the model" for name, sub in model.named_modules() if sub.training]
    if training and not model.training:
        fail(f"the model is in eval mode but its part {training[0]} is in training mode: call model.eval() last, "
             "on the whole model (BatchNorm must use the saved running statistics).")
    if model.training:
        fail("the model is in training mode: call model.eval() before returning it (BatchNorm must use the "
             "saved running statistics).")
    x = torch.randn(5, 8)
    with torch.no_grad():
        out = model(x.to(target))
    expect_close(out, expected_output(net, x), f"the loaded model's output on {target} (saved on {saved_on})")


def unasked(saved_on, target) -> list[torch.device]:
    """The accelerator's devices that a load from `saved_on` onto `target` has no reason to touch (the one that
    saved it is measured on its own). A map to the current device lands on one of them wherever that is not the
    target: the simulator's :0 legs and a two-GPU machine make the other device current."""
    kind = saved_on if saved_on.type != "cpu" else target
    if kind.type == "cpu":
        return []
    mod = torch.get_device_module(kind)
    return [d for d in (torch.device(kind.type, i) for i in range(mod.device_count()))
            if d not in (canonical(saved_on), canonical(target))]


def allocated_so_far(device) -> int:
    """Bytes ever allocated on `device` by this process: unlike the peak, it counts an allocation made while
    other memory of the device was being freed."""
    return int(torch.get_device_module(device).memory_stats(device).get("allocated_bytes.all.allocated", 0))


def load_without_touching(submission, saved_on, target):
    with tempfile.TemporaryDirectory() as folder:
        net, path, state = save_from(saved_on, folder)
        before = memory_on(saved_on)
        others = unasked(saved_on, target)
        held = {d: allocated_so_far(d) for d in others}
        with measure(saved_on) as m:
            model = load(submission, path, target, saved_on)
        if saved_on.type != "cpu" and m.peak_bytes is not None and m.peak_bytes > before:
            fail(f"load_for_eval(path, {str(target)!r}) put {m.peak_bytes - before} bytes of the checkpoint on "
                 f"{saved_on}, the device that saved it: torch.load restores every tensor to the device it was saved "
                 f"from unless told otherwise. On a machine without {saved_on} that fails; on a node it piles "
                 f"every process's copy onto one GPU. {fix_for(submission, saved_on)}")
        for d in others:
            extra = allocated_so_far(d) - held[d]
            if extra > 0:
                fail(f"load_for_eval(path, {str(target)!r}) of a checkpoint saved on {saved_on} put {extra} bytes on "
                     f"{d}, a device it was not asked to use. {fix_for(submission, saved_on)}")
        check_loaded(model, net, target, saved_on)


def test_loads_a_device_checkpoint_onto_the_cpu(submission, device):
    load_without_touching(submission, device, torch.device("cpu"))


def test_loads_a_cpu_checkpoint_onto_the_device(submission, device):
    load_without_touching(submission, torch.device("cpu"), device)


def test_loads_from_one_gpu_onto_another(submission, devices):
    saved_on, target = devices
    load_without_touching(submission, saved_on, target)


def test_does_not_run_code_from_the_file(submission, device):
    MARKS.clear()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checkpoint.pt"
        state = reference_net().state_dict()
        state["note"] = Payload()
        torch.save(state, path)
        try:
            with running("load_for_eval of a file holding a pickled function call", submission):
                submission.load_for_eval(str(path), device)
        except GradeFailure:
            pass  # refusing the file is the right answer
    if MARKS:
        fail("load_for_eval ran code stored in the checkpoint file: torch.load(..., weights_only=False) unpickles "
             "anything, including a call to any function. Keep weights_only=True, which rebuilds only tensors and "
             "plain containers; trusted classes of your own can be allowed with torch.serialization.add_safe_globals.")
