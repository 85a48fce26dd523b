"""Grader for warm_compiled: the warm-up compiles the version of the model that the requests run.

What torch.compile compiled, and whether a call compiles again, is decided by TorchDynamo's graphs and guards.
Dynamo cannot trace the simulated accelerator's tensors, so the checks that count compilations serve on the
`meta` device: a device every build has, which Dynamo traces and guards like a GPU (a graph compiled for the
CPU fails its device guards there). Every graph compiled while the checks run goes to a backend
that only notes the devices each graph was compiled for (Dynamo's own debug_backend_override): the same graphs and
guards as with any backend, and no code generated (Inductor would compile
C++ for the CPU, and has no code generator for meta). The answers are checked on the CPU."""

import random

import torch
from torch import nn

from grader.engine.expect import expect_close, expect_tensor, fail, running

SERVES_ON = torch.device("meta")
ON_META = ("(The grader serves on the meta device, which every machine has and which torch.compile guards like a "
           "GPU: a version compiled for the CPU is not used there.)")


def draw():
    f, h, c, b = random.randint(4, 9), random.randint(8, 16), random.randint(3, 5), random.randint(6, 12)
    # Dropout, handed over in training mode: serving needs model.eval().
    model = nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Dropout(0.5), nn.Linear(h, c)).train()
    return model, torch.randn(b, f)


COMPILED: list[set] = []  # for each graph compiled inside recording(): the devices of its tensors


def _record(graph_module, example_inputs):
    """A backend that notes the devices of a graph's tensors (inputs and parameters) and runs it as it is."""
    COMPILED.append({t.device for t in example_inputs if isinstance(t, torch.Tensor)})
    return graph_module.forward


def recording():
    """Every graph Dynamo compiles inside goes to _record, whatever backend the code asked for (Dynamo's own
    debug_backend_override)."""
    import torch._dynamo
    from torch._dynamo.backends.registry import _BACKENDS, register_backend

    if "grader_recording" not in _BACKENDS:
        register_backend(_record, name="grader_recording")
    return torch._dynamo.config.patch(debug_backend_override=">=0:grader_recording")


def prepared(submission, model, device, example):
    """The model prepare returns, and the devices each graph it compiled was compiled for."""
    import torch._dynamo

    torch._dynamo.reset()
    COMPILED.clear()
    with recording(), running(f"prepare(model, {str(device)!r}, example)", submission):
        served = submission.prepare(model, device, example)
    if not isinstance(served, nn.Module):
        fail(f"prepare returned {type(served).__name__}; it promises the compiled model (an nn.Module).")
    return served, list(COMPILED)


def test_warms_up_on_the_serving_device(submission, device):
    model, example = draw()
    served, compiled = prepared(submission, model, SERVES_ON, example)
    if not compiled:
        fail("prepare compiled nothing: torch.compile compiles at the first call, so the warm-up must call the "
             "compiled model (and prepare return that compiled model).")
    elsewhere = sorted({str(d) for devices in compiled for d in devices if d != SERVES_ON})
    if elsewhere:
        fail(f"the warm-up compiled the model for {', '.join(elsewhere)}, but it serves on {SERVES_ON}: the first "
             f"request on {SERVES_ON} compiles it again. Move the model and the example to the device before the "
             f"warm-up. {ON_META}")
    where = {p.device for p in served.parameters()}
    if where != {SERVES_ON}:
        fail(f"the model prepare returns has parameters on {sorted(map(str, where))}; it serves on {SERVES_ON}.")


def test_the_first_request_compiles_nothing(submission, device):
    model, example = draw()
    served, compiled = prepared(submission, model, SERVES_ON, example)
    if len(compiled) > 1:
        fail(f"prepare compiled {len(compiled)} versions of the model; one, for the device and shape of the "
             f"requests, is what they run. {ON_META}")
    with recording(), torch.no_grad(), running("the first request to the prepared model", submission):
        served(torch.randn(*example.shape, device=SERVES_ON))
    if len(COMPILED) != len(compiled):
        fail(f"the first request on {SERVES_ON} compiled the model again: the warm-up compiled a version the "
             "requests do not run (for another device, another shape, or another grad mode than a request's "
             "torch.no_grad(); or no warm-up through the compiled model). Warm up under torch.no_grad() with the "
             f"example moved to the device, after moving the model. {ON_META}")


def test_serves_the_models_answers_in_eval_mode(submission, device):
    model, example = draw()
    reference = nn.Sequential(*model).eval()
    with torch.no_grad():
        want = reference(example)
    served, _ = prepared(submission, model, torch.device("cpu"), example)
    if served.training:
        fail("the model prepare returns is in training mode: its dropout changes the answers. Call model.eval().")
    with recording(), torch.no_grad(), running("a request to the prepared model", submission):
        got = expect_tensor(served(example.clone()), "the prepared model's answer")
    expect_close(got, want, "the prepared model's answer to the example")
