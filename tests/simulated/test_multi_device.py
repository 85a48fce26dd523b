"""Issue 7: the second simulated device is fully usable (backward, optimizers), with CUDA's current-device
rules and cross-device messages."""
import copy
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import grader.simulated as gs

ROOT = __file__.rsplit("/tests/", 1)[0]
D1 = torch.device("sim:1")


def test_backward_on_sim1():
    w = torch.ones(3, device="sim:1", requires_grad=True)
    (w * torch.arange(3.0, device="sim:1")).sum().backward()
    assert w.grad.device == D1 and w.grad.cpu().tolist() == [0.0, 1.0, 2.0]
    g, = torch.autograd.grad((w ** 2).sum(), w)
    assert g.device == D1 and g.cpu().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("opt_cls", [torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW])
def test_training_step_on_sim1_matches_cpu_while_current_device_is_0(opt_cls):
    assert torch.sim.current_device() == 0
    torch.manual_seed(0)
    cpu = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    sim = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    sim.load_state_dict(cpu.state_dict())
    sim.to("sim:1")
    oc, os_ = opt_cls(cpu.parameters(), lr=0.1), opt_cls(sim.parameters(), lr=0.1)
    x, y = torch.randn(4, 1, 6, 6), torch.tensor([0, 1, 2, 0])
    for _ in range(2):
        for m, o, xx, yy in ((cpu, oc, x, y), (sim, os_, x.to("sim:1"), y.to("sim:1"))):
            o.zero_grad()
            F.cross_entropy(m(xx), yy).backward()
            o.step()
    for p, q in zip(sim.parameters(), cpu.parameters()):
        assert p.device == D1
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-6)
    assert all(v.device == D1 for st in os_.state.values() for v in st.values() if v.dim() > 0)


def test_backward_across_devices():
    w = torch.ones(3, device="sim:0", requires_grad=True)
    (w.to("sim:1") * 2).sum().backward()
    assert w.grad.device == torch.device("sim:0") and w.grad.cpu().tolist() == [2.0] * 3


def test_placement_errors_between_devices_like_cuda():
    a, b = torch.ones(3, device="sim:0"), torch.ones(3, device="sim:1")
    with pytest.raises(RuntimeError) as e:
        a + b
    assert str(e.value) == "Expected all tensors to be on the same device, but found at least two devices, sim:0 and sim:1!"
    with pytest.raises(RuntimeError) as e:
        nn.Linear(3, 2).to("sim:1")(torch.ones(4, 3, device="sim:0"))
    assert str(e.value) == ("Expected all tensors to be on the same device, but got mat1 is on sim:0, different from "
                            "other tensors on sim:1 (when checking argument in method wrapper_SIM_addmm)")
    w = torch.ones(3, device="sim:1", requires_grad=True)
    with pytest.raises(RuntimeError, match="sim:1 and sim:0"):
        (w * torch.ones(3, device="sim:0")).sum().backward()


def test_current_device_rules():
    assert torch.ones(1).sim().device == torch.device("sim:0")
    torch.sim.set_device(1)
    try:
        assert torch.sim.current_device() == 1 and torch.accelerator.current_device_index() == 1
        assert torch.ones(1).to("sim").device == D1
        assert torch.ones(1).sim().device == D1
        assert torch.zeros(2, device="sim").device == D1
        assert torch.tensor([1.0], device="sim").device == D1
        assert nn.Linear(2, 2).to("sim").weight.device == D1
        assert torch.ones(1, device="sim:0").to("sim").device == D1  # as CUDA: 'sim' means the current device
        assert torch.ones(1, device="sim:0").to("sim:0").device == torch.device("sim:0")
    finally:
        torch.sim.set_device(0)
    with torch.sim.device(1):
        assert torch.empty(1, device="sim").device == D1
        with torch.sim.device(0):
            assert torch.sim.current_device() == 0
        assert torch.sim.current_device() == 1
    assert torch.sim.current_device() == 0
    with torch.sim.device_of(torch.ones(1, device="sim:1")):
        assert torch.sim.current_device() == 1
    with torch.sim.device(None):
        assert torch.sim.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.sim.set_device(2)


def test_invalid_ordinal_is_an_accelerator_error_like_cuda():
    with pytest.raises(torch.AcceleratorError) as e:
        torch.zeros(1, device="sim:7")
    assert str(e.value).startswith("SIM error: invalid device ordinal\nGPU device may be out of range, "
                                   "do you have enough GPUs?")


def test_backward_before_install_and_in_threads_in_subprocess():
    code = r'''
import threading, torch
w = torch.ones(2, requires_grad=True); (w * 2).sum().backward()   # a backward before install
import grader.simulated as gs
gs.install()
out = []
def run():
    v = torch.ones(2, device="sim:1", requires_grad=True); (v * 3).sum().backward(); out.append(v.grad.cpu().tolist())
t = threading.Thread(target=run); t.start(); t.join()
u = torch.ones(2, device="sim:0", requires_grad=True); (u * 4).sum().backward()
print(out[0], u.grad.cpu().tolist())
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.strip() == "[3.0, 3.0] [4.0, 4.0]", r.stderr


def test_autograd_engine_limit_is_documented():
    lim = gs.LIMITS["device_count_of_guard"]
    assert "deviceCount" in lim.why and "multithreading" in lim.what


def test_fork_after_backward_on_sim_in_subprocess():
    code = r'''
import os, torch, grader.simulated as gs
gs.install()
w = torch.ones(2, device="sim:1", requires_grad=True); (w * 2).sum().backward()
pid = os.fork()
if pid == 0:
    gs.reset_after_fork()  # as the grader's workers do (a fork of a warmed-up simulator)
    v = torch.ones(2, device="sim:1", requires_grad=True); (v * 5).sum().backward()
    print("child", v.grad.cpu().tolist(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("parent", w.grad.cpu().tolist())
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.split("\n")[:2] == ["child [5.0, 5.0]", "parent [2.0, 2.0]"], r.stderr


def test_data_parallel_trains_on_both_devices_and_checks_where_the_module_is():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    reference = copy.deepcopy(model)
    x = torch.randn(6, 3)
    parallel = torch.nn.DataParallel(model.to("sim:0"), device_ids=[0, 1])
    out = parallel(x)  # scattered from the CPU to sim:0 and sim:1, gathered on sim:0
    assert out.device == torch.device("sim:0")
    out.sum().backward()
    assert model[0].weight.grad.device == torch.device("sim:0")
    # the same numbers as the two halves run on the CPU (BatchNorm normalises each half by itself)
    expected = torch.cat([reference(x[:3]), reference(x[3:])])
    assert torch.allclose(out.detach().cpu(), expected.detach(), atol=1e-6)
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device sim:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: sim:1"):
        torch.nn.DataParallel(model.to("sim:1"), device_ids=[0, 1])(x)


def test_record_stream_is_accepted():
    side = torch.sim.Stream()
    x = torch.ones(3, device="sim")
    side.wait_stream(torch.sim.current_stream())  # x is written on the current stream
    with torch.sim.stream(side):
        y = x * 2
    torch.sim.current_stream().wait_stream(side)
    x.record_stream(side)
    assert y.cpu().tolist() == [2.0, 2.0, 2.0]
