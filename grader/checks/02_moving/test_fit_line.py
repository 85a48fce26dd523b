"""Grader for fit_line: the weights are leaves on the device that require grad and receive a gradient, and fit()
finds the line. Data are drawn fresh each run; the reference solution is least squares, computed on the CPU, and
a few steps of plain gradient descent with the steps and lr given (the method the statement names)."""

import torch

from grader.engine.expect import expect_close, expect_device, expect_tensor, fail, running

LEAF = ("is not a leaf: it was made with requires_grad=True on the CPU and then moved, so it is a copy whose "
        "gradient goes back to the CPU original. Create it on the device directly "
        "(torch.zeros(..., device=device, requires_grad=True)), or move first and call .requires_grad_() after.")


def init(submission, n, device):
    with running(f"init_params({n}, {str(device)!r})", submission):
        out = submission.init_params(n, device)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"init_params should return two tensors (w, b), got {type(out).__name__}.")
    return out


def check_trainable(t, name, shape, device):
    t = expect_tensor(t, name)
    expect_device(t, device, name, "create the weights on the device they are trained on.")
    if tuple(t.shape) != shape or t.dtype != torch.float32:
        fail(f"{name} should be float32 of shape {shape}, got {t.dtype} {tuple(t.shape)}.")
    if not t.is_leaf:
        fail(f"{name} on {device} {LEAF}")
    if not t.requires_grad:
        fail(f"{name} does not require grad, so nothing can train it: create it with requires_grad=True "
             "(on the device), or call .requires_grad_() on the moved tensor.")


def problem(device):
    n = int(torch.randint(2, 6, ()))
    N = int(torch.randint(40, 80, ()))
    x = torch.randn(N, n)
    w_true, b_true = torch.randn(n), torch.randn(1)
    y = x @ w_true + b_true + 0.01 * torch.randn(N)
    return n, x, y


def test_init_params_are_trainable_leaves_on_the_device(submission, device):
    n = int(torch.randint(2, 9, ()))
    w, b = init(submission, n, device)
    check_trainable(w, "w returned by init_params", (n,), device)
    check_trainable(b, "b returned by init_params", (1,), device)
    if w.detach().abs().sum().cpu() != 0 or b.detach().abs().sum().cpu() != 0:
        fail("init_params should start from zeros, as before the fix.")


def test_one_step_gives_the_weights_a_gradient(submission, device):
    n, x, y = problem(device)
    w, b = init(submission, n, device)
    check_trainable(w, "w returned by init_params", (n,), device)
    xd, yd = x.to(device), y.to(device)
    with running("one gradient step on the weights from init_params", submission):
        optimizer = torch.optim.SGD([w, b], lr=0.1)
        loss = ((xd @ w + b - yd) ** 2).mean()
        loss.backward()
    for t, name in ((w, "w"), (b, "b")):
        if t.grad is None:
            fail(f"after loss.backward(), {name}.grad is None: {name} {LEAF}")
        expect_device(t.grad, device, f"{name}.grad", "create the weights on the device they are trained on.")
    expected_w_grad = 2 * x.T @ (-y) / len(y)  # at w = 0, b = 0
    expect_close(w.grad, expected_w_grad, "w.grad after one backward pass from zero weights", atol=1e-4)
    with running("optimizer.step()", submission):
        optimizer.step()
    if w.detach().abs().sum().cpu() == 0:
        fail("optimizer.step() did not change w: the weights handed to the optimizer are not the ones the "
             "loss was computed from.")


def test_fit_finds_the_line(submission, device):
    # 100 steps suffice: with x ~ N(0, 1), at most 5 features and at least 40 rows, the smallest curvature of
    # the loss is above 0.75, so each step at lr 0.1 shrinks the error by 0.925 or better (4e-4 after 100).
    n, x, y = problem(device)
    with running(f"fit(x, y) with x of shape {tuple(x.shape)} on {device}", submission):
        w, b = submission.fit(x.to(device), y.to(device), steps=100, lr=0.1)
    expect_device(expect_tensor(w, "w returned by fit"), device, "w returned by fit", "train on the device of x.")
    design = torch.cat([x, torch.ones(len(x), 1)], dim=1).double()
    solution = torch.linalg.lstsq(design, y.double()[:, None]).solution[:, 0].float()
    expect_close(w, solution[:n], "w returned by fit (compared with least squares)", atol=2e-2, rtol=2e-2)
    expect_close(b, solution[n:], "b returned by fit (compared with least squares)", atol=2e-2, rtol=2e-2)


def test_fit_takes_steps_of_plain_gradient_descent(submission, device):
    # The statement names the method (plain gradient descent, torch.optim.SGD) and its arguments: after a few
    # steps the weights are where those steps lead, which momentum, another optimizer, or a fixed number of
    # steps or learning rate would miss even when they end near the line.
    n, x, y = problem(device)
    steps, lr = int(torch.randint(2, 6, ())), float(torch.empty(()).uniform_(0.02, 0.2))
    with running(f"fit(x, y, steps={steps}, lr={lr:.3f}) with x of shape {tuple(x.shape)} on {device}", submission):
        w, b = submission.fit(x.to(device), y.to(device), steps=steps, lr=lr)
    for t, name, shape in ((w, "w", (n,)), (b, "b", (1,))):
        t = expect_tensor(t, f"{name} returned by fit")
        expect_device(t, device, f"{name} returned by fit", "train on the device of x.")
        if tuple(t.shape) != shape or t.dtype != torch.float32:
            fail(f"{name} returned by fit should be float32 of shape {shape}, got {t.dtype} {tuple(t.shape)}.")
    ref_w, ref_b = torch.zeros(n, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
    xd, yd = x.double(), y.double()
    for _ in range(steps):
        residual = xd @ ref_w + ref_b - yd
        ref_w = ref_w - lr * 2 * xd.T @ residual / len(yd)
        ref_b = ref_b - lr * 2 * residual.mean(dim=0, keepdim=True)
    for t, ref, name in ((w, ref_w, "w"), (b, ref_b, "b")):
        expect_close(t, ref, f"{name} returned by fit(x, y, steps={steps}, lr={lr:.3f}), compared with {steps} "
                     "steps of plain gradient descent from zero", atol=1e-4, rtol=1e-3)
