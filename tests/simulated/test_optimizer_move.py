"""Issue 11, item 2: an optimizer whose state stayed on the CPU after model.to(device) fails as on CUDA,
and an optimizer built before the move keeps training the (same) parameters."""
import pytest
import torch
import torch.nn as nn

# CUDA: the state tensor (CPU) meets the gradient (device) in a TensorIterator op (lerp_/add_/mul_ of the
# foreach slow path or of the per-tensor loop), which names the device first.
MSG = "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu!"


def _step_then_move(opt_cls, **kw):
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = opt_cls(m.parameters(), **kw)
    m(torch.ones(4, 3)).sum().backward()
    opt.step()
    opt.zero_grad()
    m.to("sim")
    m(torch.ones(4, 3, device="sim")).sum().backward()
    return m, opt


@pytest.mark.parametrize("opt_cls,kw", [
    (torch.optim.Adam, {}), (torch.optim.AdamW, {}), (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    (torch.optim.Adam, {"foreach": False}), (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "foreach": False}),
    (torch.optim.RMSprop, {}), (torch.optim.Adagrad, {}),
])
def test_state_left_on_cpu_raises_like_cuda(opt_cls, kw):
    m, opt = _step_then_move(opt_cls, **kw)
    with pytest.raises(RuntimeError) as e:
        opt.step()
    assert str(e.value) == MSG


def test_default_optimizers_pick_the_foreach_path_as_on_cuda():
    from torch.optim.optimizer import _default_to_fused_or_foreach

    m = nn.Linear(3, 2).to("sim")
    assert _default_to_fused_or_foreach(list(m.parameters()), False) == (False, True)
    assert _default_to_fused_or_foreach(list(nn.Linear(3, 2).parameters()), False) == (False, False)


def test_model_to_keeps_parameter_objects_both_ways():
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = list(m.parameters())
    m.to("sim")
    assert all(a is b for a, b in zip(params, m.parameters()))
    assert all(p.device.type == "sim" and isinstance(p, nn.Parameter) for p in m.parameters())
    m.to("sim:1")
    assert all(a is b for a, b in zip(params, m.parameters())) and params[0].device.index == 1
    m.cpu()
    assert all(a is b for a, b in zip(params, m.parameters()))
    assert all(type(p) is nn.Parameter and p.device.type == "cpu" for p in m.parameters())


def test_grad_moves_with_the_parameter():
    m = nn.Linear(3, 1)
    m(torch.ones(2, 3)).sum().backward()
    g = m.weight.grad.clone()
    m.to("sim")
    assert m.weight.grad.device.type == "sim" and torch.equal(m.weight.grad.cpu(), g)


def test_optimizer_built_before_the_move_trains_the_model():
    torch.manual_seed(0)
    cpu = nn.Linear(3, 1)
    sim = nn.Linear(3, 1)
    sim.load_state_dict(cpu.state_dict())
    oc = torch.optim.Adam(cpu.parameters(), lr=0.1)
    os_ = torch.optim.Adam(sim.parameters(), lr=0.1)  # built while the model is on the CPU
    sim.to("sim")
    x = torch.randn(5, 3)
    for _ in range(3):
        for m, o, xx in ((cpu, oc, x), (sim, os_, x.to("sim"))):
            o.zero_grad()
            m(xx).pow(2).sum().backward()
            o.step()
    torch.testing.assert_close(sim.weight.detach().cpu(), cpu.weight.detach())
    assert all(v.device.type == "sim" for st in os_.state.values() for v in st.values() if v.dim() > 0)


def test_parameter_on_device_prints_like_cuda():
    m = nn.Linear(2, 1)
    m.to("sim")
    r = repr(m.bias)
    assert r.startswith("Parameter containing:\ntensor([") and r.endswith("device='sim:0', requires_grad=True)"), r


@pytest.mark.parametrize("make", [
    lambda: torch.jit.script(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))),
    lambda: torch.jit.trace(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), torch.ones(4, 3)),
], ids=["script", "trace"])
def test_a_torchscript_module_moves_to_the_device_trains_and_comes_back(make):
    # Its C++ module holds the parameters too, so they are replaced rather than swapped
    # (LIMITS['script_module_identity']): an optimizer built after the move trains them.
    from grader.simulated import LIMITS

    m = make()
    before = next(m.parameters())
    m.to("sim:1")
    assert next(m.parameters()) is not before and "new Parameter objects" in LIMITS["script_module_identity"].what
    assert {t.device for t in (*m.parameters(), *m.buffers())} == {torch.device("sim:1")}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    start = next(m.parameters()).detach().cpu()
    m(torch.randn(4, 3, device="sim:1")).pow(2).sum().backward()
    opt.step()
    assert not torch.equal(next(m.parameters()).detach().cpu(), start)
    m.cpu()
    assert m(torch.ones(4, 3)).device.type == "cpu"
    with pytest.raises(RuntimeError):  # a CPU module given a device batch fails, as on CUDA
        m(torch.ones(4, 3, device="sim:1"))
