"""Grader for loss_item_each_step: a training epoch must read the loss from the device once, not per step.
Counted with measure(): copies to the CPU plus reads of device values by Python (print(loss) among them), on
every leg, over an epoch longer than any logging period (a read every 100 steps is seen).

The rest of the contract: a Python float comes back (not a tensor), the mean over every example (the last batch
is smaller), the model trained in train mode (it arrives in eval mode, and its batch norm tells the modes
apart), and the running total keeps no step's autograd graph (what Python reads at the end must not carry the
graphs of earlier steps: the chapter's loss.detach())."""

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from grader.guard import audit
from grader.engine.expect import expect_close, fail, measure, running, within
from grader.engine.instruments import learner_line

aten = torch.ops.aten
FIX = ("accumulate the loss on the device (a tensor: total += loss.detach() * len(y)) and read it once, "
       "after the loop")
LONG_EPOCH = (105, 130)  # steps: longer than a logging period of 100, so a read every 100 steps shows


def problem(device, steps=None, batch_norm=True):
    """A classifier on `device` handed over in eval mode (as after a validation pass), its optimizer, CPU
    batches (the last one smaller), and a copy of the model on the CPU for the reference."""
    features, classes = random.randint(4, 8), random.randint(3, 6)
    if batch_norm:  # train and eval mode give other losses and other updates
        model = nn.Sequential(nn.Linear(features, 16), nn.BatchNorm1d(16), nn.Tanh(), nn.Linear(16, classes))
    else:  # the fewest operations per step, for the long epoch (the simulator runs each one in Python)
        model = nn.Linear(features, classes, bias=False)
    steps = steps or random.randint(5, 8)
    size = random.randint(6, 10) if steps < 20 else random.randint(2, 4)
    sizes = [size] * (steps - 1) + [random.randint(2 if batch_norm else 1, size - 1)]  # batch norm needs 2 rows
    batches = [(torch.randn(n, features), torch.randint(0, classes, (n,))) for n in sizes]
    reference = copy.deepcopy(model)
    model.to(device).eval()
    momentum = 0.9 if batch_norm else 0.0  # momentum adds operations to each step of the long epoch
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum), batches, reference


def reference_epoch(model, batches):
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    total, seen = 0.0, 0
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += float(loss.detach()) * len(y)
        seen += len(y)
    return total / seen


def epoch(submission, device, model, optimizer, batches):
    what = f"train_epoch(model, optimizer, batches, {str(device)!r}) with {len(batches)} batches"
    with running(what, submission, explain_device_error=f"every tensor of the step must be on {device}."):
        return submission.train_epoch(model, optimizer, batches, device)


def expect_train_mode(model):
    """The model came in eval mode: its batch norm counts the batches it normalised in train mode only."""
    norm = next(m for m in model.modules() if isinstance(m, nn.BatchNorm1d))
    if int(norm.num_batches_tracked) == 0:
        fail("train_epoch trained the model in eval mode: its batch norm used its running statistics instead of "
             "each batch's and never updated them, so the losses and the updates differ from training. The model "
             "can arrive in eval mode (after a validation pass): call model.train() at the start of the epoch.")


def test_returns_the_mean_loss(submission, device):
    model, optimizer, batches, ref_model = problem(device)
    out = epoch(submission, device, model, optimizer, batches)
    expected = reference_epoch(ref_model, batches)
    if isinstance(out, torch.Tensor) or not isinstance(out, (float, int)):
        kind = f"a tensor on {out.device}" if isinstance(out, torch.Tensor) else f"a {type(out).__name__}"
        fail(f"train_epoch should return the mean loss as a Python float, for the log, but it returned {kind}: "
             "read the device total once, at the end, with .item().")
    expect_train_mode(model)
    if not within(out, expected, 1e-4 * max(1.0, abs(expected))):
        fail(f"train_epoch returned a mean loss of {out:.6f}; the mean cross-entropy over the epoch's "
             f"{sum(len(y) for _, y in batches)} examples is {expected:.6f}. Weight each batch by its size "
             "(the last one is smaller) and divide by the number of examples.")


def test_trains_the_model(submission, device):
    model, optimizer, batches, ref_model = problem(device)
    epoch(submission, device, model, optimizer, batches)
    reference_epoch(ref_model, batches)
    expect_train_mode(model)
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters()):
        expect_close(p, q, f"parameter {name} after one epoch", atol=1e-4, rtol=1e-3)


class HostReadGraphs(TorchDispatchMode):
    """Records the autograd graph (grad_fn) of each tensor whose values Python reads (.item(), float(t),
    a copy to the CPU), with the learner's line that read it."""

    def __init__(self):
        super().__init__()
        self.reads = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            read = func is aten._local_scalar_dense.default or (
                func is aten._to_copy.default and args[0].device.type != "cpu"
                and torch.device(kwargs.get("device") or args[0].device).type == "cpu")
            if read and args[0].grad_fn is not None:
                self.reads.append((args[0].grad_fn, learner_line()))
        except Exception:  # recording must never change what the learner's code does
            pass
        return func(*args, **kwargs)


audit.CHECK_MODES.add(HostReadGraphs)  # the grader's own mode, entered around learner code


def steps_in(graph, parameters) -> int:
    """How many training steps' graphs `graph` reaches: each step's forward makes its own node that feeds a
    parameter's gradient, so the most such nodes of one parameter is the number of steps chained. A parameter is
    known by its data pointer: the tensor an AccumulateGrad node gives back is not always the Parameter object
    itself (torch 2.11 gives another Python object)."""
    ptrs = {p.data_ptr() for p in parameters}
    feeding, seen, todo = {}, {}, [graph]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node  # kept alive, so that no id is reused by a node met later
        for child, _ in getattr(node, "next_functions", ()):
            variable = getattr(child, "variable", None)
            if variable is not None and variable.data_ptr() in ptrs:
                feeding.setdefault(variable.data_ptr(), set()).add(id(node))
            todo.append(child)
    return max((len(nodes) for nodes in feeding.values()), default=0)


def test_running_total_keeps_no_graph(submission, device):
    model, optimizer, batches, _ = problem(device)
    log = HostReadGraphs()
    with log:
        epoch(submission, device, model, optimizer, batches)
    params = list(model.parameters())
    for graph, line in log.reads:
        chained = steps_in(graph, params)
        if chained > 1:
            where = f" ({line})" if line else ""
            fail(f"the value train_epoch reads{where} still carries the autograd graphs of {chained} of the "
                 f"{len(batches)} training steps: the total was built from the losses themselves (not "
                 "loss.detach()), so every step's graph is chained onto it and kept in memory until the epoch ends. "
                 "Add loss.detach() (total += loss.detach() * len(y)): the log needs the value, not its gradient.")


def test_reads_the_device_once_per_epoch(submission, device):
    # The long epoch on accelerators only: on the CPU there is nothing to wait for, and nothing is counted.
    steps = random.randint(*LONG_EPOCH) if device.type != "cpu" else None
    model, optimizer, batches, _ = problem(device, steps=steps, batch_norm=False)
    model.train()
    with measure(device) as m:
        epoch(submission, device, model, optimizer, batches)
    if m.waits > 1:
        printing = (" Printing a device tensor reads its values as .item() does: print the mean once, after the "
                    "loop." if m.printed else "")
        cost = (f"Each one makes Python wait until {device} has finished the step" if device.type != "cpu" else
                "On an accelerator each one makes Python wait until the device has finished the step")
        fail(f"one epoch of {len(batches)} steps made {m.describe_waits()}; it needs one, at the end. "
             f"{cost}. To fix it, {FIX}.{printing}")
