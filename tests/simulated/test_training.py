import io
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

ROOT = __file__.rsplit("/tests/", 1)[0]
DEV = torch.device("sim:0")


def _is_sim(t):
    return t.device == DEV


def test_module_to_autograd_and_grads_on_device():
    torch.manual_seed(0)
    m = nn.Linear(4, 2).to("sim")
    assert all(_is_sim(p) and isinstance(p, nn.Parameter) for p in m.parameters())
    ref = nn.Linear(4, 2)
    ref.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    x = torch.randn(3, 4)
    m(x.to("sim")).pow(2).sum().backward()
    ref(x).pow(2).sum().backward()
    assert _is_sim(m.weight.grad)
    torch.testing.assert_close(m.weight.grad.cpu(), ref.weight.grad)


@pytest.mark.parametrize("opt_cls,kw", [(torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                                        (torch.optim.Adam, {"lr": 0.01}),
                                        (torch.optim.AdamW, {"lr": 0.01})])
def test_optimizers_match_cpu_and_keep_state_on_device(opt_cls, kw):
    torch.manual_seed(0)
    cpu = nn.Linear(3, 2)
    sim = nn.Linear(3, 2)
    sim.load_state_dict(cpu.state_dict())
    sim.to("sim")
    oc, os_ = opt_cls(cpu.parameters(), **kw), opt_cls(sim.parameters(), **kw)
    x = torch.randn(5, 3)
    for _ in range(3):
        for m, o, xx in ((cpu, oc, x), (sim, os_, x.to("sim"))):
            o.zero_grad()
            m(xx).sum().backward()
            o.step()
    torch.testing.assert_close(sim.weight.cpu(), cpu.weight)
    for st in os_.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor) and v.dim() > 0:
                assert _is_sim(v)


def test_layers_forward_backward():
    torch.manual_seed(0)
    x = torch.randn(2, 1, 8, 8, device="sim")
    cnn = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Dropout(0.2),
                        nn.Flatten(), nn.Linear(3 * 6 * 6, 4), nn.LayerNorm(4)).to("sim")
    out = cnn(x)
    w = torch.tensor([1.0, 2.0, 1.0, 0.5], device="sim")
    loss = F.cross_entropy(out, torch.tensor([0, 3], device="sim"), weight=w)
    loss.backward()
    assert _is_sim(out) and _is_sim(cnn[0].weight.grad)
    assert _is_sim(cnn[1].running_mean) and cnn[1].num_batches_tracked.item() == 1
    emb = nn.Embedding(10, 4).to("sim")
    emb(torch.tensor([[1, 2], [3, 4]], device="sim")).sum().backward()
    assert _is_sim(emb.weight.grad)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).to("sim")
    q = torch.randn(2, 3, 8, device="sim")
    o, _ = mha(q, q, q)
    o.sum().backward()
    assert _is_sim(mha.in_proj_weight.grad)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_rnns_match_cpu(cls):
    torch.manual_seed(0)
    cpu = cls(5, 7, batch_first=True)
    sim = cls(5, 7, batch_first=True)
    sim.load_state_dict(cpu.state_dict())
    sim.to("sim")
    x = torch.randn(2, 4, 5)
    oc = cpu(x)[0]
    os_ = sim(x.to("sim"))[0]
    torch.testing.assert_close(os_.cpu(), oc, rtol=1e-5, atol=1e-5)
    oc.pow(2).sum().backward()
    os_.pow(2).sum().backward()
    torch.testing.assert_close(sim.weight_hh_l0.grad.cpu(), cpu.weight_hh_l0.grad, rtol=1e-4, atol=1e-5)


def test_save_load_map_location_and_default(tmp_path):
    m = nn.Linear(3, 2).to("sim")
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, map_location="cpu")
    assert all(v.device.type == "cpu" for v in sd.values())
    torch.testing.assert_close(sd["weight"], m.weight.detach().cpu())
    buf.seek(0)
    assert all(_is_sim(v) for v in torch.load(buf).values())
    # where sim is not installed, loading without map_location fails as a CUDA checkpoint does on a
    # CPU-only machine (grader.simulated imported, as in a grader's CPU process); map_location works.
    path = tmp_path / "ck.pt"
    path.write_bytes(buf.getvalue())
    code = (
        "import torch, grader.simulated as gs\n"
        f"print(torch.load({str(path)!r}, map_location='cpu')['weight'].device)\n"
        f"print(torch.load({str(path)!r}, map_location={{'sim:0': 'cpu'}})['weight'].device)\n"
        "for wo in (True, False):\n"
        f"    try:\n        torch.load({str(path)!r}, weights_only=wo)\n"
        "    except RuntimeError as e:\n        print(repr(str(e)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = r.stdout.splitlines()
    assert lines[:2] == ["cpu", "cpu"], r.stderr
    assert lines[2:] == [repr(MISSING)] * 2, r.stderr
    # a process that never imports grader.simulated keeps torch's wording; limit_message names the limit
    code = f"import torch\ntry:\n    torch.load({str(path)!r})\nexcept RuntimeError as e:\n    print(str(e))\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    import grader.simulated as gs

    assert "load_without_grader" in gs.limit_message(RuntimeError(r.stdout.strip())), r.stdout


MISSING = ("Attempting to deserialize object on a SIM device but torch.sim.is_available() is False. If you are "
           "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
           "storages to the CPU.")


def test_map_location_to_sim_moves_tensors_without_device_storages():
    buf = io.BytesIO()
    torch.save({"a": torch.arange(3.0), "p": nn.Parameter(torch.ones(2))}, buf)
    for ml in ("sim", torch.device("sim:1"), {"cpu": "sim:1"}):
        buf.seek(0)
        d = torch.load(buf, map_location=ml)
        want = torch.device("sim:1") if ml != "sim" else torch.device("sim:0")
        assert d["a"].device == want and d["a"].cpu().tolist() == [0.0, 1.0, 2.0]
        assert d["p"].device == want and d["p"].requires_grad and isinstance(d["p"], nn.Parameter)
    m = nn.Linear(3, 2).to("sim:1")
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, map_location="sim:0", weights_only=True)
    assert all(v.device == torch.device("sim:0") for v in sd.values())
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on SIM device 2 but "
                                           r"torch.sim.device_count\(\) is 2"):
        buf.seek(0)
        torch.load(buf, map_location="sim:2")


def test_load_on_a_missing_index_like_cuda(tmp_path):
    path = tmp_path / "ck1.pt"
    torch.save({"w": torch.ones(2, device="sim:1")}, path)
    code = (f"import torch, grader.simulated as gs\ngs.install(count=1)\n"
            f"print(torch.load({str(path)!r}, map_location='sim:0')['w'].device)\n"
            f"try:\n    torch.load({str(path)!r})\nexcept RuntimeError as e:\n    print(str(e))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.splitlines() == [
        "sim:0",
        "Attempting to deserialize object on SIM device 1 but torch.sim.device_count() is 1. Please use "
        "torch.load with map_location to map your storages to an existing device."], r.stderr


def test_dataloader_pin_memory_and_non_blocking(rec):
    ds = TensorDataset(torch.randn(40, 3), torch.arange(40))
    seen = 0
    for xb, yb in DataLoader(ds, batch_size=16, pin_memory=True):
        assert xb.is_pinned() and yb.is_pinned()
        xb = xb.to("sim", non_blocking=True)
        seen += xb.shape[0]
    assert seen == 40
    assert len(rec.h2d) == 3 and all(c.pinned and c.non_blocking for c in rec.h2d)
    assert rec.n_syncs == 0  # async pinned uploads do not sync


def test_pin_memory_flags():
    t = torch.ones(3)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and p.tolist() == [1.0] * 3
    assert p.pin_memory() is p
    assert not torch.ones(1, device="sim").is_pinned()


def test_autocast_bf16_training_step():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 4)).to("sim")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    x, y = torch.randn(6, 8, device="sim"), torch.randint(0, 4, (6,), device="sim")
    with torch.autocast(device_type="sim", dtype=torch.bfloat16):
        h = m[0](x)
        out = m(x)
        loss = F.cross_entropy(out, y)
    assert h.dtype == torch.bfloat16 and out.dtype == torch.bfloat16 and loss.dtype == torch.float32
    loss.backward()
    assert m[0].weight.grad.dtype == torch.float32
    opt.step()
    with torch.autocast(device_type="sim", dtype=torch.float16):
        assert m(x).dtype == torch.float16
    assert m(x).dtype == torch.float32  # outside autocast
    with torch.autocast(device_type="sim", dtype=torch.bfloat16), pytest.raises(RuntimeError, match="unsafe to autocast"):
        F.binary_cross_entropy(torch.full((2,), 0.5, device="sim"), torch.ones(2, device="sim"))


def test_transformer_block_with_sdpa_and_mha_matches_cpu():
    torch.manual_seed(0)
    cpu = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    sim = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    sim.load_state_dict(cpu.state_dict())
    sim.to("sim")
    x = torch.randn(2, 5, 16)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    oc = cpu(x, src_mask=mask, is_causal=True)
    os_ = sim(x.to("sim"), src_mask=mask.to("sim"), is_causal=True)
    torch.testing.assert_close(os_.cpu(), oc, rtol=1e-5, atol=1e-5)
    oc.sum().backward()
    os_.sum().backward()
    torch.testing.assert_close(sim.self_attn.in_proj_weight.grad.cpu(), cpu.self_attn.in_proj_weight.grad,
                               rtol=1e-4, atol=1e-5)
    q = torch.randn(1, 2, 4, 8, device="sim")
    assert F.scaled_dot_product_attention(q, q, q, is_causal=True).device.type == "sim"


def test_torch_compile_runs_on_sim():
    torch.manual_seed(0)
    m = nn.Linear(4, 2).to("sim")
    cm = torch.compile(m)
    x = torch.randn(3, 4, device="sim")
    torch.testing.assert_close(cm(x).cpu(), m(x).cpu())
    cm(x).sum().backward()
    assert m.weight.grad.device.type == "sim"
