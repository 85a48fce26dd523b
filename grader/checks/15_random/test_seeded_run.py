"""Grader for seeded_run: seed_everything must seed the CPU's generator and the training device's, so that a run
repeats on any device; it keeps seeding Python's and NumPy's generators."""

import os
import random
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from grader.engine.expect import fail, running

ALL_DEVICES = ("torch.manual_seed(seed) seeds the CPU's generator and the default generator of every device, "
               "whatever its kind; torch.cuda.manual_seed_all seeds CUDA's GPUs only.")


CUBLAS_CONFIGS = (":4096:8", ":16:8")  # the workspace settings CUDA's deterministic matrix products accept


@contextmanager
def global_switches_restored():
    """Learner code may turn on torch.use_deterministic_algorithms or cuDNN's flags; the checks after it must not
    run under them. Where it turns on deterministic algorithms (not warn_only) without a CUBLAS_WORKSPACE_CONFIG
    that CUDA accepts, every matrix product on a CUDA GPU raises: refused here on every leg, for one verdict."""
    was = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
           torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    try:
        yield
        if (torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled()
                and os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in CUBLAS_CONFIGS):
            fail("seed_everything turned on torch.use_deterministic_algorithms(True): on a CUDA GPU every matrix "
                 "product (nn.Linear, its backward) then raises RuntimeError unless CUBLAS_WORKSPACE_CONFIG=:4096:8 "
                 "(or :16:8) was set in the environment before the program started, which this program does not "
                 "do. The exercise asks for seeding only: torch.manual_seed(seed) makes this run repeat on one device.")
    finally:
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != was[:2]:
            torch.use_deterministic_algorithms(was[0], warn_only=was[1])  # its first call costs seconds: only if changed
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = was[2], was[3]


def draw_seed():
    return int(torch.randint(0, 2**31, ()))


def move_the_streams_on(device):
    """What ran before the second run (another experiment, a data loader): every generator has moved on."""
    random.random()
    np.random.rand()
    torch.rand(5)
    if device.type != "cpu":
        torch.rand(5, device=device)


def device_rng_state(device):
    return torch.get_device_module(device).get_rng_state(device)


def seeded_states(submission, seed, device):
    with global_switches_restored(), running(f"seed_everything({seed})", submission):
        submission.seed_everything(seed)
    return torch.get_rng_state(), (device_rng_state(device) if device.type != "cpu" else None)


def test_seeds_the_generators_the_run_draws_from(submission, device):
    seed = draw_seed()
    cpu, dev = seeded_states(submission, seed, device)
    move_the_streams_on(device)
    cpu_again, dev_again = seeded_states(submission, seed, device)
    if not torch.equal(cpu, cpu_again):
        fail(f"seed_everything({seed}) leaves the CPU's generator unseeded: nn.Linear initialises its weights "
             f"there (before .to(device)), so every run starts from other weights. {ALL_DEVICES}")
    if dev is not None and not torch.equal(dev, dev_again):
        fail(f"seed_everything({seed}) leaves {device}'s generator unseeded: the data and the dropout masks are "
             f"drawn there, so every run trains on other noise. {ALL_DEVICES}")


def weights(model, device, what):
    if not isinstance(model, nn.Module):
        fail(f"{what} should return the trained model, got {type(model).__name__}.")
    tensors = [p.detach() for p in model.parameters()]
    if not tensors:
        fail(f"{what} returned a model without parameters.")
    for t in tensors:
        if t.device != device and not (t.device.type == device.type == "cpu"):
            fail(f"{what} returned a model with a parameter on {t.device}: it trains on {device}.")
    return torch.cat([t.cpu().flatten() for t in tensors])


def run(submission, seed, device):
    what = f"train_briefly({seed}, {str(device)!r})"
    with global_switches_restored(), running(what, submission):
        model = submission.train_briefly(seed, device)
    return weights(model, device, what)


def test_a_run_repeats_with_the_same_seed(submission, device):
    seed = draw_seed()
    first = run(submission, seed, device)
    move_the_streams_on(device)
    again = run(submission, seed, device)
    if not torch.equal(first, again):
        fail(f"train_briefly({seed}, {str(device)!r}) gave other weights the second time (largest difference "
             f"{(first - again).abs().max().item():.3g}): a generator it draws from was not seeded. {ALL_DEVICES}")
    other = run(submission, seed + 1, device)
    if other.shape == first.shape and torch.equal(first, other):
        fail(f"train_briefly gave the same weights for seeds {seed} and {seed + 1}: seed_everything must seed "
             "with the seed it is given.")


def test_still_seeds_python_and_numpy(submission, device):
    seed = draw_seed()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    want = (random.random(), float(np.random.rand()))
    move_the_streams_on(device)
    with global_switches_restored(), running(f"seed_everything({seed})", submission):
        submission.seed_everything(seed)
    got = (random.random(), float(np.random.rand()))
    if got[0] != want[0]:
        fail(f"seed_everything({seed}) no longer seeds Python's random module: keep random.seed(seed).")
    if got[1] != want[1]:
        fail(f"seed_everything({seed}) no longer seeds NumPy's generator: keep np.random.seed(seed).")
