"""Grader for eval_loop: every batch reaches the model on the model's device, the accuracy is right, the model
stays where it is and the caller's batches are left alone.

A forward pre-hook on the grader's model records the device of every input it is given, and whether the model
was in training mode, so moving the model to the CPU instead, computing somewhere else, or dropping the
`model.eval()` (the model has dropout and batch norm, which behave differently while training) is seen whatever
the machine. The promised Python float is checked as such: a 0-dim tensor is not one."""

import torch
from torch import nn

from grader.engine.expect import canonical, fail, running, within

EXPLAIN = ("the batch is still on cpu: x.to(device) returns a new tensor and leaves x where it was. "
           "Assign the result: images = images.to(device), and the same for the labels.")


def make_model(features: int, classes: int) -> nn.Module:
    """Dropout and batch norm, so that predictions in training mode differ from evaluation's."""
    model = nn.Sequential(nn.Linear(features, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(16, classes))
    with torch.no_grad():  # running statistics far from a batch's own, as after training
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.25, 4)
    return model


def make_batches(model: nn.Module, features: int, classes: int):
    """Fresh CPU batches of varying size; about half the labels agree with the model."""
    batches = []
    for _ in range(int(torch.randint(3, 6, ()))):
        B = int(torch.randint(5, 13, ()))
        images = torch.randn(4 * B, features)
        with torch.no_grad():
            top2 = model(images).topk(2, dim=1).values
        # Keep clear winners only, so that the argmax cannot differ between devices by rounding.
        images = images[(top2[:, 0] - top2[:, 1]) > 1e-2][:B]
        B = len(images)
        with torch.no_grad():
            guess = model(images).argmax(dim=1)
        labels = torch.where(torch.rand(B) < 0.5, guess, torch.randint(0, classes, (B,)))
        batches.append((images, labels))
    return batches


def reference_accuracy(model, batches) -> float:
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(x).argmax(dim=1) == y).sum()) for x, y in batches)
    return correct / sum(len(y) for _, y in batches)


def setup(device):
    features, classes = int(torch.randint(4, 10, ())), int(torch.randint(3, 6, ()))
    cpu_model = make_model(features, classes)
    batches = make_batches(cpu_model, features, classes)
    model = make_model(features, classes)
    model.load_state_dict(cpu_model.state_dict())
    model.train()  # as a training loop leaves it: evaluate must switch it to evaluation
    model.to(device)
    seen, modes, homes = [], [], []

    def record(module, args):
        seen.append(args[0].device if args and isinstance(args[0], torch.Tensor) else None)
        modes.append(module.training)
        homes.append(next(module.parameters()).device)  # a model moved away and back is seen here

    model.register_forward_pre_hook(record)
    return cpu_model, model, batches, seen, modes, homes


def run(submission, model, batches, device):
    with running(f"evaluate(model, batches, {str(device)!r}) with the model on {device}", submission,
                 explain_device_error=EXPLAIN):
        return submission.evaluate(model, batches, device)


def test_accuracy_is_right(submission, device):
    cpu_model, model, batches, _, modes, _ = setup(device)
    expected = reference_accuracy(cpu_model, list(batches))  # before the call, which may change the list
    result = run(submission, model, batches, device)
    if isinstance(result, torch.Tensor):
        fail(f"evaluate returned a tensor ({result.dtype}, shape {tuple(result.shape)}, on {result.device}), but "
             "it promises the accuracy as a Python float, which a report or a comparison with a number can use "
             "as it is: read the count once, at the end, correct.item() / total.")
    if not isinstance(result, float):
        fail(f"evaluate should return the accuracy as a Python float, got a {type(result).__name__}.")
    if any(modes):
        fail(f"the model ran in training mode in {sum(modes)} of its {len(modes)} calls: its dropout and batch norm "
             "then give other predictions than in evaluation. Keep model.eval() before the loop.")
    if not within(result, expected, 1e-6):
        fail(f"evaluate returned an accuracy of {result:.4f}, expected {expected:.4f} over {len(batches)} batches: "
             "every batch must be scored, each prediction against its own label.")


def test_batches_reach_the_model_on_its_device(submission, device):
    _, model, batches, seen, _, homes = setup(device)
    originals = [(x, y, x.clone(), y.clone()) for x, y in batches]
    listed = list(batches)
    run(submission, model, batches, device)
    if len(batches) != len(listed) or any(b is not a for a, b in zip(listed, batches)):
        fail("evaluate changed the caller's list of batches: loop over it and move each batch into a variable of "
             "the loop (x = x.to(device)), leaving the caller's list and tensors as they were.")
    moved = sorted({str(d) for d in [*homes, *(p.device for p in model.parameters())]
                    if canonical(d) != canonical(device)})
    if moved:  # first: a model moved to the CPU also sees CPU inputs, and the cause is the move
        fail(f"evaluate moved the model to {', '.join(moved)}: the model stays on {device}; move the batches "
             "to it, not the other way round.")
    if len(seen) < len(batches):
        fail(f"the model was called {len(seen)} times for {len(batches)} batches: every batch goes through the "
             "model once.")
    wrong = sorted({str(d) for d in seen if d is None or canonical(d) != canonical(device)})
    if wrong:
        fail(f"the model (on {device}) was called with inputs on {', '.join(wrong)}: {EXPLAIN}")
    for x, y, x0, y0 in originals:
        if x.device.type != "cpu" or y.device.type != "cpu" or not torch.equal(x, x0) or not torch.equal(y, y0):
            fail("evaluate changed the caller's batches (their data or their device): x = x.to(device) makes a "
                 "new tensor for the loop and leaves the caller's tensor alone.")
