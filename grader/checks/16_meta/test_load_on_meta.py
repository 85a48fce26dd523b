"""Grader for load_on_meta: the checkpoint's tensors become the weights of a model built on meta (assign=True), on
the device asked for, in eval mode, with nothing drawn at random."""

import tempfile
import warnings
from pathlib import Path

import torch
from torch import nn

from grader.engine.expect import canonical, expect_close, fail, running

NO_OP = ("{where}: load_state_dict copies the checkpoint into the model's tensors, and a copy into a meta tensor "
         "does nothing (PyTorch only warns: \"copying from a non-meta parameter in the checkpoint to a meta "
         "parameter in the current model, which is a no-op\"). Pass assign=True: the checkpoint's tensors then "
         "become the model's, on the device they were loaded to.")


def checkpoint(folder):
    """A trained-looking Classifier's state: every value drawn here, running statistics and step count too."""
    sizes = dict(features=12, hidden=48, classes=4)  # Classifier()'s, as the real checkpoint's are
    body = nn.Sequential(nn.Linear(sizes["features"], sizes["hidden"]), nn.BatchNorm1d(sizes["hidden"]), nn.ReLU())
    net = nn.Module()
    net.body, net.head = body, nn.Linear(sizes["hidden"], sizes["classes"])
    with torch.no_grad():
        for p in net.parameters():
            p.normal_()
        body[1].running_mean.normal_()
        body[1].running_var.uniform_(0.5, 2.0)
        body[1].num_batches_tracked.fill_(int(torch.randint(1, 1000, ())))
    state = net.state_dict()
    path = Path(folder) / "classifier.pt"
    torch.save(state, path)
    return net.eval(), state, path, sizes


def load(submission, device, path):
    what = f"load_classifier(path, {str(device)!r})"
    with warnings.catch_warnings(record=True) as caught, running(what, submission):
        warnings.simplefilter("always")
        model = submission.load_classifier(str(path), device)
    if not isinstance(model, nn.Module):
        fail(f"{what} should return the Classifier, got {type(model).__name__}.")
    no_op = any("which is a no-op" in str(w.message) for w in caught)
    return model, what, no_op


def test_holds_the_checkpoint_on_the_device(submission, device):
    with tempfile.TemporaryDirectory() as folder:
        net, state, path, sizes = checkpoint(folder)
        model, what, no_op = load(submission, device, path)
    got = model.state_dict()
    for name, want in state.items():
        if name not in got:
            fail(f"{what} returned a model without {name}: keep the Classifier as it is.")
        t = got[name]
        if t.device.type == "meta":
            fail(NO_OP.format(where=f"{what} returned a model whose {name} is still on meta"))
        if canonical(t.device) != canonical(device):
            fail(f"{what} returned a model whose {name} is on {t.device}, not on {device}: with assign=True the "
                 "model keeps the checkpoint's tensors where they are, so load them onto the device first "
                 "(torch.load(path, map_location=device, weights_only=True)), or move the model afterwards.")
        if t.dtype != want.dtype or t.shape != want.shape or not torch.equal(t.detach().cpu(), want):
            fail(f"{what} returned a model whose {name} is not the checkpoint's"
                 f"{' (it holds NaN: memory never written, as to_empty leaves it)' if t.is_floating_point() and t.isnan().any() else ''}"
                 ": load the checkpoint into it.")
    if no_op:
        fail(NO_OP.format(where=f"{what} warned that a load was a no-op"))


def test_predicts_in_eval_mode(submission, device):
    with tempfile.TemporaryDirectory() as folder:
        net, state, path, sizes = checkpoint(folder)
        model, what, _ = load(submission, device, path)
    if model.training or any(m.training for m in model.modules()):
        fail(f"{what} returned a model in training mode: batch norm would then use each batch's statistics "
             "instead of the checkpoint's. Return model.eval().")
    x = torch.randn(int(torch.randint(5, 20, ())), sizes["features"])
    with running(f"the model returned by {what}, called on a batch on {device}", submission), torch.no_grad():
        out = model(x.to(device))
    with torch.no_grad():
        want = net.head(net.body(x))
    expect_close(out, want, f"the prediction of the model returned by {what}", atol=1e-4, rtol=1e-4)


def test_parameters_are_trainable_parameters(submission, device):
    with tempfile.TemporaryDirectory() as folder:
        _, state, path, sizes = checkpoint(folder)
        model, what, _ = load(submission, device, path)
    params = dict(model.named_parameters())
    for name in ("body.0.weight", "body.0.bias", "head.weight", "head.bias"):
        if name not in params or not params[name].requires_grad:
            fail(f"{what} returned a model whose {name} is no longer a parameter that trains (requires_grad): "
                 "load with load_state_dict(state, assign=True), which keeps each parameter a Parameter.")


def rng_states(device):
    return [torch.get_rng_state()] + ([torch.get_device_module(device).get_rng_state(device)]
                                      if device.type != "cpu" else [])


def test_draws_no_random_weights(submission, device):
    with tempfile.TemporaryDirectory() as folder:
        _, _, path, _ = checkpoint(folder)
        before = rng_states(device)
        _, what, _ = load(submission, device, path)
        after = rng_states(device)
    if not all(torch.equal(a, b) for a, b in zip(before, after)):
        where = "the CPU's" if not torch.equal(before[0], after[0]) else f"{device}'s"
        fail(f"{what} drew random numbers from {where} generator: the model was initialised at random (built on "
             "a real device) and then overwritten by the checkpoint, the time the statement asks to save. Build "
             "it on meta, which draws nothing, and make the checkpoint's tensors its weights "
             "(load_state_dict(state, assign=True)).")
