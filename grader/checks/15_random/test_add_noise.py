"""Grader for add_noise: the noise is drawn on x's device from a generator of that device seeded with `seed`,
replayable, without touching the global random streams and without a copy from the CPU."""

import torch

from grader.engine.expect import expect_tensor, fail, measure, running, within

EXPLAIN = ("torch.Generator() makes a CPU generator, and a draw on a device takes a generator of that device's "
           "type: make it where x is, torch.Generator(device=x.device), then seed it.")

# Every float dtype the statement allows, with the rounding each leaves on x + std * noise.
DTYPES = {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 1e-2}


def draw_x(device, dtype=torch.float32):
    shape = (int(torch.randint(40, 60, ())), int(torch.randint(40, 60, ())))
    return torch.randn(shape, dtype=torch.float64).to(dtype).to(device)


def call(submission, x, seed, std=None, what=None):
    what = what or f"add_noise(x on {x.device}, seed={seed})"
    args = (x, seed) if std is None else (x, seed, std)
    with running(what, submission, explain_device_error=EXPLAIN):
        out = submission.add_noise(*args)
    out = expect_tensor(out, what)
    if out.device != x.device:
        fail(f"{what} returned a tensor on {out.device}: the result stays on x's device ({x.device}).")
    if out.shape != x.shape or out.dtype != x.dtype:
        fail(f"{what} returned {out.dtype} of shape {tuple(out.shape)}: the result is like x ({x.dtype}, shape "
             f"{tuple(x.shape)}).")
    return out


def noise_of(out, x, std):
    return (out.cpu().double() - x.cpu().double()) / std


def test_draws_on_the_device_of_x(submission, device):
    x = draw_x(device)
    with measure(device) as m:
        call(submission, x, int(torch.randint(0, 2**31, ())))
    if device.type != "cpu" and sum(c.nbytes for c in m.h2d) >= x.numel() * x.element_size():
        fail(f"add_noise copied {sum(c.nbytes for c in m.h2d)} bytes from the CPU to {device} for a batch of "
             f"{x.numel() * x.element_size()} bytes: the noise was drawn on the CPU and copied over. The statement "
             "asks for it to be drawn on x's device, with a generator of that device.")


def test_the_same_seed_gives_the_same_noise(submission, device):
    x, seed = draw_x(device), int(torch.randint(0, 2**31, ()))
    first = call(submission, x, seed)
    torch.rand(7, device=device)  # the global streams move on between the two calls, as in a training loop
    torch.rand(7)
    again = call(submission, x, seed, what=f"add_noise(x, seed={seed}) called a second time")
    if not torch.equal(first.cpu(), again.cpu()):
        fail(f"add_noise(x, seed={seed}) gave other noise the second time: the noise must come from a generator "
             "seeded with `seed` on every call (a generator made once and reused goes on with its stream; one "
             "left unseeded, or the global one, depends on what ran before).")
    other = call(submission, x, seed + 1, what=f"add_noise(x, seed={seed + 1})")
    if torch.equal(first.cpu(), other.cpu()):
        fail(f"add_noise gave the same noise for seeds {seed} and {seed + 1}: seed the generator with `seed`.")


def test_the_noise_has_the_standard_deviation_asked(submission, device):
    x = draw_x(device, torch.float64 if device.type != "mps" else torch.float32)
    std = float(torch.empty(()).uniform_(0.3, 3.0))
    noise = noise_of(call(submission, x, 5, std, what=f"add_noise(x, seed=5, std={std:.3f})"), x, std)
    mean, spread = noise.mean().item(), noise.std().item()
    if not (within(mean, 0.0, 0.15) and within(spread, 1.0, 0.15)):
        fail(f"add_noise(x, seed=5, std={std:.3f}) added noise of mean {mean * std:.3f} and standard deviation "
             f"{spread * std:.3f}: the noise is Gaussian, of mean 0 and standard deviation std.")


def test_keeps_the_dtype_of_x(submission, device):
    for dtype, tol in DTYPES.items():
        if dtype == torch.float64 and device.type == "mps":
            continue
        x = draw_x(device, dtype)
        out = call(submission, x, 11, what=f"add_noise of a {str(dtype).removeprefix('torch.')} x")
        noise = noise_of(out, x, 0.1)
        if not torch.isfinite(noise).all() or not within(noise.std().item(), 1.0, 0.25 + 10 * tol):
            fail(f"add_noise of a {dtype} x did not add noise of standard deviation std.")


def rng_states(device):
    states = [torch.get_rng_state()]
    if device.type != "cpu":
        states.append(torch.get_device_module(device).get_rng_state(device))
    return states


def test_leaves_the_global_random_streams_alone(submission, device):
    x = draw_x(device)
    before = rng_states(device)
    call(submission, x, 3)
    after = rng_states(device)
    if not all(torch.equal(a, b) for a, b in zip(before, after)):
        moved = "the CPU's" if not torch.equal(before[0], after[0]) else f"{device}'s"
        fail(f"add_noise changed {moved} global random stream (torch.manual_seed, or a draw without "
             "generator=): the rest of the program's randomness would then repeat or depend on the augmentation. "
             "Draw only from a generator of your own, made on x's device and seeded with `seed`.")
