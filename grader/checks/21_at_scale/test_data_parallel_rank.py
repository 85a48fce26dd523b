"""Grader for data_parallel_rank, the capstone of "Beyond one device": a rank trains on the device its local rank
numbers, reduces on that device, trains exactly as all the ranks together would on the CPU, and prefetches its
batches on a side stream without making Python wait.

One run per leg (a fresh draw; the checks below read it), as one rank of a run of two nodes: the leg's device is
this rank's, LOCAL_RANK its index, and RANK counts on from the first node's ranks, so it never equals LOCAL_RANK.
The other ranks are played by the grader: `all_reduce` is a stand-in for torch.distributed.all_reduce that adds
what the other ranks would contribute (computed beforehand on the CPU) and, like NCCL, refuses a CPU tensor with
NCCL's own message (on the CPU leg it takes CPU tensors, as Gloo does). The shard has several batches, so a wait
or a blocking copy per batch shows."""

import random
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import GradeFailure, canonical, expect_close, fail, measure, once_per_leg, running, within
from grader.guard import audit
from grader.engine.instruments import CountingMode, learner_line, non_blocking

aten = torch.ops.aten
LR = 0.05


def node_layout(device: torch.device):
    """(local_rank, devices per node): the leg's device is this rank's."""
    if device.type == "cpu":
        return random.randint(0, 1), 2
    return device.index or 0, torch.get_device_module(device).device_count()


def make_model(features, hidden, classes):
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))


@dataclass
class Draw:
    env: dict
    rank: int
    world_size: int
    model: nn.Module  # the replica handed over, on the CPU
    shards: list  # shards[r]: rank r's batches
    lr: float


def draw(device) -> Draw:
    local_rank, per_node = node_layout(device)
    world_size = 2 * per_node
    rank = per_node + local_rank  # a rank of the second node
    env = {"RANK": str(rank), "LOCAL_RANK": str(local_rank), "WORLD_SIZE": str(world_size),
           "LOCAL_WORLD_SIZE": str(per_node), "GROUP_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
    f, h, c = random.randint(6, 10), random.randint(12, 16), random.randint(3, 5)
    steps = random.randint(6, 8)
    shards = []
    for _ in range(world_size):
        shard = []
        for _ in range(steps):
            b = random.randint(20, 28)
            shard.append((torch.randn(b, f), torch.randint(0, c, (b,))))
        shards.append(shard)
    return Draw(env, rank, world_size, make_model(f, h, c), shards, random.choice([0.03, 0.05, 0.1]))


@dataclass
class Reference:
    model: nn.Module
    mean_loss: float
    contributions: list  # what the other ranks add to each all_reduce of this rank, in order: (what, tensor)


def reference(d: Draw) -> Reference:
    """Every rank of the run, on the CPU: the same replica, each rank's gradients averaged at every step."""
    model = make_model(d.model[0].in_features, d.model[0].out_features, d.model[2].out_features)
    model.load_state_dict(d.model.state_dict())
    contributions, loss_sums, counts = [], [0.0] * d.world_size, [0] * d.world_size
    for k in range(len(d.shards[0])):
        grads = []
        for r in range(d.world_size):
            x, y = d.shards[r][k]
            model.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads.append([p.grad.clone() for p in model.parameters()])
            loss_sums[r] += loss.item() * len(y)
            counts[r] += len(y)
        for j, (name, p) in enumerate(model.named_parameters()):
            others = sum(grads[r][j] for r in range(d.world_size) if r != d.rank)
            contributions.append((f"the gradient of {name} at step {k + 1}", others))
        with torch.no_grad():
            for j, p in enumerate(model.parameters()):
                p -= d.lr * sum(g[j] for g in grads) / d.world_size
    others = [r for r in range(d.world_size) if r != d.rank]
    contributions.append(("the totals (the sum of the rank's losses, its number of samples)",
                          torch.tensor([sum(loss_sums[r] for r in others), float(sum(counts[r] for r in others))])))
    return Reference(model, sum(loss_sums) / sum(counts), contributions)


NCCL_CPU = "No backend type associated with device type cpu"  # ProcessGroup::getBackend, with NCCL alone


class StandIn:
    """torch.distributed.all_reduce (SUM) of this rank, the other ranks played from the reference."""

    def __init__(self, device: torch.device, contributions):
        self.device = device
        self.expected = [(what, t.to(device)) for what, t in contributions]
        self.calls = 0

    def __call__(self, tensor, *args, **kwargs):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"all_reduce takes a tensor; got {type(tensor).__name__}")
        if self.device.type != "cpu" and tensor.device.type == "cpu":
            raise RuntimeError(NCCL_CPU)
        if self.calls >= len(self.expected):
            raise RuntimeError(f"all_reduce was called {self.calls + 1} times; the run has {len(self.expected)} "
                               "reductions: each parameter's gradient at each step, then the totals once")
        what, add = self.expected[self.calls]
        if tuple(tensor.shape) != tuple(add.shape):
            raise RuntimeError(f"all_reduce call {self.calls + 1} got a tensor of shape {tuple(tensor.shape)}, where "
                               f"the run reduces {what} (shape {tuple(add.shape)}) on every rank")
        if canonical(tensor.device) != canonical(self.device):
            raise RuntimeError(f"all_reduce got a tensor on {tensor.device}, but this rank's process group works on "
                               f"{self.device}")
        self.calls += 1
        tensor.add_(add)


@dataclass
class BatchCopy:
    stream: object  # the current stream of the device when the copy was made
    blocking: bool  # the host waited for it: no non_blocking=True, or from pageable memory
    non_blocking: bool
    pinned: bool
    line: object


class PrefetchMode(CountingMode):
    """Counts as measure() does, and notes each copy of a batch to the device with its stream."""

    def __init__(self, m, shapes, copies):
        super().__init__(m)
        self.shapes, self.copies = shapes, copies

    def _note(self, func, args, kwargs, out):
        super()._note(func, args, kwargs, out)
        if func is aten._to_copy.default or func is aten.copy_.default:
            src, dst = (args[0], out) if func is aten._to_copy.default else (args[1], args[0])
            if (isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) and src.device.type == "cpu"
                    and dst.device.type != "cpu" and (tuple(src.shape), src.dtype) in self.shapes):
                asked = non_blocking(func is aten._to_copy.default, args, kwargs)
                self.copies.append(BatchCopy(torch.accelerator.current_stream(dst.device), not (asked and src.is_pinned()),
                                             asked, src.is_pinned(), learner_line()))


audit.CHECK_MODES.add(PrefetchMode)  # the grader's own mode, entered around learner code


@dataclass
class Run:
    draw: Draw
    ref: Reference
    expected_device: torch.device
    result: object
    forwards: list = field(default_factory=list)  # (device of the input, current stream there)
    copies: list = field(default_factory=list)
    m: object = None


def explain(text: str, d: Draw, device: torch.device) -> str:
    if "invalid device ordinal" in text:
        text += (f"\nThis rank is RANK={d.env['RANK']} of WORLD_SIZE={d.env['WORLD_SIZE']}, on the second node, where it "
                 f"is LOCAL_RANK={d.env['LOCAL_RANK']} of LOCAL_WORLD_SIZE={d.env['LOCAL_WORLD_SIZE']}: RANK counts the "
                 "processes of every node, while each node numbers its own devices from 0.")
    if NCCL_CPU in text:
        text += (f"\nThat is NCCL's refusal of a CPU tensor: a collective of the NCCL backend reduces tensors on the "
                 f"rank's device only ({device} here). Make the tensor you reduce there.")
    if "same device" in text or "to be on" in text:
        text += f"\nThis rank's device is {device}: is every tensor of the step there?"
    return text


@once_per_leg
def trained(submission, device) -> Run:
    d = draw(device)
    ref = reference(d)
    collective = StandIn(device, ref.contributions)
    shapes = {(tuple(t.shape), t.dtype) for shard in d.shards for batch in shard for t in batch}
    forwards, copies = [], []

    def hook(module, args):
        x = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if module is model:
            forwards.append((None if x is None else x.device,
                             None if x is None or x.device.type == "cpu" else torch.accelerator.current_stream(x.device)))

    model = make_model(d.model[0].in_features, d.model[0].out_features, d.model[2].out_features)
    model.load_state_dict(d.model.state_dict())
    handle = nn.modules.module.register_module_forward_pre_hook(hook)
    try:
        with measure(device, mode=lambda m: PrefetchMode(m, shapes, copies)) as m, \
                running(f"train_rank(env, {device.type!r}, model, batches, all_reduce, lr={d.lr}) as rank "
                        f"{d.rank} of {d.world_size} (LOCAL_RANK {d.env['LOCAL_RANK']})", submission):
            result = submission.train_rank(dict(d.env), device.type, model, d.shards[d.rank], collective, lr=d.lr)
    except GradeFailure as exc:
        raise GradeFailure(explain(str(exc), d, device)) from None
    finally:
        handle.remove()
    d.model = model  # the replica the learner trained
    return Run(d, ref, device, result, forwards, copies, m)


def test_trains_on_the_device_its_local_rank_numbers(submission, device):
    run = trained(submission, device)
    where = sorted({str(p.device) for p in run.draw.model.parameters()})
    if [canonical(w) for w in where] != [canonical(device)]:
        fail(f"after train_rank the replica's parameters are on {', '.join(where)}; LOCAL_RANK="
             f"{run.draw.env['LOCAL_RANK']} names {device}.")
    elsewhere = sorted({str(w) for w, _ in run.forwards if w is None or canonical(w) != canonical(device)})
    if len(run.forwards) < len(run.draw.shards[0]) or elsewhere:
        fail(f"train_rank ran the model on {', '.join(elsewhere) or 'fewer batches than its shard has'}: every step "
             f"must run on {device}.")


def test_trains_as_all_the_ranks_together(submission, device):
    run = trained(submission, device)
    if not isinstance(run.result, float):
        fail(f"train_rank returned {type(run.result).__name__}; it returns the mean loss as a Python float (.item()).")
    if not within(run.result, run.ref.mean_loss, 1e-4 + 1e-4 * abs(run.ref.mean_loss)):
        nan = "" if run.result == run.result else (
            " A NaN here is what reading memory another stream still writes gives: a batch made on the side stream "
            "and freed on the step's stream needs t.record_stream(that stream), or the side stream's next copy may "
            "reuse its block while the step still reads it.")
        fail(f"train_rank returned a mean loss of {run.result:.6g}; over the samples of all {run.draw.world_size} ranks "
             f"it is {run.ref.mean_loss:.6g}.{nan}")
    for (name, p), q in zip(run.draw.model.named_parameters(), run.ref.model.parameters()):
        expect_close(p.detach().cpu(), q.detach(), f"the trained {name}", atol=1e-4, rtol=1e-3)


def test_prefetches_without_making_python_wait(submission, device):
    run = trained(submission, device)
    if device.type == "cpu":
        return  # nothing to copy
    blocking = [c for c in run.copies if c.blocking]
    if blocking:
        lines = sorted({str(c.line) for c in blocking})
        if any(c.non_blocking for c in blocking):
            fail(f"{len(blocking)} copies of a batch to {device} ({'; '.join(lines)}) asked for non_blocking=True from "
                 "pageable memory: such a copy is staged through a pinned buffer and Python waits for it anyway. "
                 "Copy from pinned memory (Tensor.pin_memory()) for it to be asynchronous.")
        fail(f"{len(blocking)} copies of a batch to {device} ({'; '.join(lines)}) were blocking: Python waited for each "
             "one. The prefetch copies from pinned memory with non_blocking=True.")


def test_prefetches_on_a_side_stream(submission, device):
    run = trained(submission, device)
    if device.type == "cpu":
        return
    steps = {s for _, s in run.forwards if s is not None}
    same = [c for c in run.copies if c.stream in steps]
    if not run.copies or same:
        fail(f"{len(same) or 'none'} of the copies of the batches ran on a side stream: the copies of the next batch run "
             f"on the stream the steps run on, so they wait for the step before them and nothing overlaps. Make them "
             "inside `with side:` of a side stream (torch.Stream(device=...)).")


def test_python_waits_only_for_the_mean_loss(submission, device):
    run = trained(submission, device)
    if device.type == "cpu":
        return
    if run.m.waits > 3:  # the read of the local sum before the reduction, and two reads of the result
        fail(f"train_rank made {run.m.describe_waits()} over {len(run.draw.shards[0])} steps: each makes Python wait "
             f"for {device}. The step's work waits for the prefetch on the device "
             "(torch.accelerator.current_stream(device).wait_stream(side)), with no wait of the host; the totals stay "
             "on the device until the one read at the end.")
