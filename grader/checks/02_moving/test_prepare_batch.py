"""Grader for prepare_batch: right values, float32 on the device, and each tensor copied once in its smaller
dtype: the uint8 images as uint8 (convert after the copy), the float64 targets as float32 (convert before or
during the copy). Host-to-device copies and the bytes that really cross are counted with
grader.engine.instruments.measure, the same on every leg: a combined .to(device, dtype, non_blocking=True) converts on
the device after the copy, so the old dtype crosses (images: right; targets: wrong). On the CPU there is nothing
to copy."""

import torch

from grader.engine.expect import expect_close, expect_device, fail, measure, running

FIX = "what crosses is the dtype at the moment of the copy: move each tensor in its smaller dtype"


def batch():
    B, C = int(torch.randint(4, 9, ())), 3
    H, W = int(torch.randint(8, 17, ())), int(torch.randint(8, 17, ()))
    images = torch.randint(0, 256, (B, C, H, W), dtype=torch.uint8)
    targets = torch.randn(B, dtype=torch.float64) * 10
    return images, targets


def call(submission, images, targets, device):
    with running(f"prepare_batch(images, targets, {str(device)!r})", submission):
        out = submission.prepare_batch(images, targets, device)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail("prepare_batch should return two tensors: (images, targets).")
    return out


def test_values_dtypes_and_devices(submission, device):
    images, targets = batch()
    out_images, out_targets = call(submission, images.clone(), targets.clone(), device)
    for t, what in ((out_images, "the images"), (out_targets, "the targets")):
        expect_device(t, device, f"{what} returned by prepare_batch", "both tensors go to the device.")
        if t.dtype != torch.float32:
            fail(f"{what} returned by prepare_batch are {t.dtype}; the model expects float32.")
    expect_close(out_images, images.double().div(255).float(), "the images returned by prepare_batch", atol=1e-6)
    expect_close(out_targets, targets.float(), "the targets returned by prepare_batch", atol=1e-6)


def test_each_tensor_crosses_once_in_its_smaller_dtype(submission, device):
    images, targets = batch()
    with measure(device) as m:
        call(submission, images, targets, device)
    if device.type == "cpu":
        return  # nothing to copy on the CPU
    n_img, n_tgt = images.numel(), targets.numel()
    best = n_img * 1 + n_tgt * 4
    sizes = [c.nbytes for c in m.h2d]
    total = sum(sizes)
    problems = []
    if n_img * 4 in sizes:
        problems.append(f"the images crossed as float32 ({n_img * 4} bytes, 4 per pixel): move the uint8 images "
                        f"first ({n_img} bytes), then convert them on the device")
    as_float64 = [c for c in m.h2d if c.nbytes == n_tgt * 8]
    if any(c.converted_on == "device" for c in as_float64):
        # .to(device, torch.float32, non_blocking=True): the copy runs first, the conversion on the device
        problems.append(f"the targets crossed as float64 ({n_tgt * 8} bytes): with non_blocking=True, "
                        f".to(device, torch.float32) copies first and converts on {device}; convert on the CPU "
                        f"before the copy, targets.float().to(device, non_blocking=True), or make the combined "
                        f"call blocking ({n_tgt * 4} bytes)")
    elif as_float64:
        problems.append(f"the targets crossed as float64 ({n_tgt * 8} bytes): convert them to float32 before or "
                        f"during the copy, .to(device, torch.float32) ({n_tgt * 4} bytes)")
    if problems or total > best or len(sizes) > 2:
        if problems:
            detail = "; ".join(problems)
        elif len(sizes) > 2:
            detail = f"{len(sizes)} copies where two (one per tensor) are enough"
        else:  # e.g. both packed into one float32 tensor: neither crossed as itself
            detail = (f"what crossed was not the uint8 images ({n_img} bytes) and the float32 targets "
                      f"({n_tgt * 4} bytes): copy each tensor on its own, in its smaller dtype")
        fail(f"prepare_batch copied {total} bytes to {device} in {len(sizes)} host-to-device "
             f"cop{'y' if len(sizes) == 1 else 'ies'}, where {best} are enough: {detail}. ({FIX}.)")
