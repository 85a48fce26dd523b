"""Grader for pick_device: the chosen device is this machine's accelerator when it has a usable one, else the CPU.

The expectation comes from torch.accelerator, whatever the machine: a CUDA GPU, an Apple GPU, the simulated
accelerator. Code that only knows some kinds by name (cuda, mps) fails where the machine has another kind;
that is the bug this exercise teaches. Each check runs with another device than the leg's current
(grader.engine.expect.other_device_current), and expects that one: a bare device resolves to the current index."""


import torch

from grader.engine.expect import canonical, expect_tensor, fail, other_device_current, running

FIX = ("ask torch.accelerator which accelerator this machine has (torch.accelerator.is_available(), "
       "torch.accelerator.current_accelerator()) instead of comparing it with a list of names; "
       "a torch.device never equals a string such as 'cuda'.")


def expected_device() -> torch.device:
    if torch.accelerator.is_available():
        return torch.device(torch.accelerator.current_accelerator().type, torch.accelerator.current_device_index())
    return torch.device("cpu")


def describe(expected: torch.device) -> str:
    if expected.type == "cpu":
        return "this machine has no usable accelerator (torch.accelerator.is_available() is False)"
    return (f"this machine has a usable {expected.type} accelerator "
            f"(torch.accelerator.current_accelerator() is {expected.type}, current index {expected.index})")


def resolve(chosen, what: str) -> torch.device:
    """Where a tensor created with device=chosen lands: 'cuda' resolves to the current index."""
    if chosen is None:
        fail(f"{what} returned None (is a return statement missing?): return a torch.device.")
    try:
        return torch.empty(0, device=chosen).device
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        fail(f"{what} returned {chosen!r}, which is not a usable device here ({type(exc).__name__}: "
             f"{str(exc).splitlines()[0] if str(exc) else ''}): {FIX}")


def test_picks_the_accelerator_when_there_is_one(submission, device):
    with other_device_current(device):
        expected = expected_device()
        with running("pick_device()", submission):
            chosen = submission.pick_device()
        if not isinstance(chosen, (torch.device, str)):
            fail(f"pick_device() returned a {type(chosen).__name__}; return a torch.device.")
        landed = resolve(chosen, "pick_device()")
    if landed.type != expected.type:
        fail(f"pick_device() returned {chosen}, but {describe(expected)}: {FIX}")
    if landed != expected:
        fail(f"pick_device() returned {chosen}, which is {landed}, while the current {expected.type} device is "
             f"{expected}: return the accelerator without pinning an index (tensors made with it go to the "
             "current device), or use torch.accelerator.current_device_index().")


def test_build_model_puts_the_model_there(submission, device):
    in_features, classes = int(torch.randint(3, 20, ())), int(torch.randint(2, 9, ()))
    with other_device_current(device):
        expected = expected_device()
        with running(f"build_model({in_features}, {classes})", submission):
            model = submission.build_model(in_features, classes)
        params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
        if not params:
            fail(f"build_model({in_features}, {classes}) should return an nn.Module with parameters.")
        places = sorted({str(canonical(p.device)) for p in params})
        if places != [str(expected)] and {canonical(p.device).type for p in params} == {expected.type}:
            fail(f"build_model() put the model's parameters on {', '.join(places)}, while the current "
                 f"{expected.type} device is {expected}: the kind is right, the index is not. Return the "
                 "accelerator without pinning an index (tensors made with it go to the current device), or use "
                 "torch.accelerator.current_device_index().")
        if places != [str(expected)]:
            fail(f"build_model() put the model's parameters on {', '.join(places)}, but {describe(expected)}: "
                 f"the model goes where pick_device() says; {FIX}")
        x = torch.randn(int(torch.randint(2, 6, ())), in_features, device=expected)
        with running("build_model(...)(x) with x on the chosen device", submission):
            out = model(x)
        out = expect_tensor(out, "the model's output")
        if tuple(out.shape) != (x.shape[0], classes):
            fail(f"the model maps ({x.shape[0]}, {in_features}) to {tuple(out.shape)}; expected "
                 f"({x.shape[0]}, {classes}). Keep the model as it was.")


def test_picks_the_cpu_where_no_device_of_the_accelerator_is_usable(submission, device):
    # A build with an accelerator on a machine with no usable device of it (a CUDA wheel on a laptop) still
    # names the accelerator in current_accelerator(). A GPU cannot be made unusable inside a process, the
    # simulator can: this runs on the simulated legs, which every machine runs, so the verdict is the same on
    # every machine (returning current_accelerator() unchecked passed on GPU machines and failed on laptops).
    from grader import simulated
    from grader.engine import legs

    if legs.simulated_profile(device.type) is None:
        return

    with simulated.unusable():
        with running("pick_device() where the accelerator has no usable device", submission):
            chosen = submission.pick_device()
        if not isinstance(chosen, (torch.device, str)):
            fail(f"pick_device() returned a {type(chosen).__name__} where the accelerator has no usable device "
                 "(torch.accelerator.is_available() is False); return torch.device('cpu') there.")
        landed = resolve(chosen, "pick_device() where the accelerator has no usable device "
                                 "(torch.accelerator.is_available() is False)")
    if landed.type != "cpu":
        fail(f"pick_device() returned {chosen} where the accelerator has no usable device "
             f"(torch.accelerator.is_available() is False): return the CPU there; {FIX}")
