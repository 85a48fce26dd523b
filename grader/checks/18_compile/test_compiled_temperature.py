"""Grader for compiled_temperature: every tensor the compiled forward reads is on the module's device.

Dynamo cannot trace the simulated accelerator's tensors, so the wrapper is moved to the `meta` device, which
every build has and which Dynamo traces like a GPU, and compiled with a backend that notes the device of every
tensor of each graph it is given (Dynamo's own debug_backend_override routes every graph to it; no code is
generated). The answers are checked on the CPU, in float32 and float64."""

import random

import torch
from torch import nn

from grader.engine.expect import expect_close, expect_tensor, fail, running

DEVICE = torch.device("meta")
COMPILED: list[list] = []  # for each graph compiled inside recording(): the devices of its tensors, in order


def _record(graph_module, example_inputs):
    """Notes the devices of the graph's inputs and of every tensor it computes (a CPU tensor made inside the
    forward is one of them), and runs the graph as it is."""
    made = [n.meta.get("example_value") for n in graph_module.graph.nodes]
    COMPILED.append([t.device for t in [*example_inputs, *made] if isinstance(t, torch.Tensor)])
    return graph_module.forward


def recording():
    import torch._dynamo
    from torch._dynamo.backends.registry import _BACKENDS, register_backend

    if "grader_recording" not in _BACKENDS:
        register_backend(_record, name="grader_recording")
    return torch._dynamo.config.patch(debug_backend_override=">=0:grader_recording")


def draw():
    f, c = random.randint(4, 9), random.randint(3, 6)
    return nn.Sequential(nn.Linear(f, 12), nn.ReLU(), nn.Linear(12, c)), torch.randn(random.randint(3, 8), f), \
        random.choice([0.5, 1.25, 2.5, 4.0])  # exact in float32, the dtype of a buffer made from a float


def make(submission, model, temperature):
    with running(f"TemperatureScaled(model, {temperature})", submission):
        return submission.TemperatureScaled(model, temperature)


def test_the_compiled_graph_reads_only_the_devices_tensors(submission, device):
    import torch._dynamo

    model, x, temperature = draw()
    scaled = make(submission, model, temperature)
    with running(f"TemperatureScaled(...).to({str(DEVICE)!r})", submission):
        scaled.to(DEVICE)
    torch._dynamo.reset()
    COMPILED.clear()
    compiled = torch.compile(scaled)
    with recording(), torch.no_grad(), running("the compiled TemperatureScaled on a batch", submission):
        out = compiled(x.to(DEVICE))
    expect_tensor(out, "the compiled forward's result")
    stray = sorted({str(d) for devices in COMPILED for d in devices if d != DEVICE})
    if stray:
        left = [name for name, value in vars(scaled).items() if isinstance(value, torch.Tensor)
                and value.device != DEVICE]
        what = (f"the attribute {left[0]!r}, a plain tensor that .to() does not move" if left
                else "a tensor made or kept off the module's device")
        fail(f"the compiled graph reads a {stray[0]} tensor ({what}) beside tensors on {DEVICE}, the device the "
             "module was moved to: the constant is not where the model is (with mode='reduce-overhead', older "
             "releases skip CUDA graphs for such a graph altogether). Make the temperature a buffer (self.register_buffer), which moves "
             f"with the module. (The grader moves it to the meta device, which every machine has and which "
             "torch.compile traces like a GPU.)")


def test_divides_the_logits_by_the_temperature(submission, device):
    for dtype, tol in ((torch.float32, 1e-5), (torch.float64, 1e-12)):
        model, x, temperature = draw()
        model = model.to(dtype)
        want = model(x.to(dtype)).detach().double() / temperature
        scaled = make(submission, model, temperature).to(dtype)
        with torch.no_grad(), running(f"TemperatureScaled(model, {temperature}) on a {dtype} batch", submission):
            got = expect_tensor(scaled(x.to(dtype)), "TemperatureScaled's result")
        if got.dtype != dtype:
            fail(f"TemperatureScaled on a {dtype} model and batch returned {got.dtype}: keep the logits' dtype.")
        expect_close(got.double(), want, f"TemperatureScaled(model, {temperature}) on a {dtype} batch",
                     atol=tol, rtol=tol)
