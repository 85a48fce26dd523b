"""`devcourse doctor`'s float64 finding reads grader.engine.instruments' count, the one the graders read: each line where
float64 comes onto the device (a factory, a conversion, torch.tensor(..., dtype=torch.float64, device=...), which
works below the dispatcher), not the lines that work on it afterwards, and nothing on the CPU, where float64 is
at home (as on the graders' cpu legs)."""

from __future__ import annotations

import pytest

from grader import simulated
from grader.doctor import diagnose

SCRIPT = '''\
import torch
device = torch.device("sim:1" if torch.accelerator.is_available() else "cpu")
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = torch.zeros((), dtype=torch.float64, device=device)
for step in range(4):
    x = torch.randn(8, 4, device=device)
    y = torch.tensor([[1.0]] * 8, dtype=torch.float64, device=device)
    loss = ((model(x).double() - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss.detach()
print(total.item())
'''
MADE = {5, 8, 9}  # the factory, torch.tensor(...), .double(); not `total += ...` (line 13) nor the loss (line 9's rest)


def float64_lines(tmp_path, device: str) -> set[int]:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    result = diagnose(str(path), device=device, cwd=str(tmp_path), timeout=300)
    assert result["outcome"] in ("finished", "stopped"), result  # stopped: after the steps it runs
    return {f["line"] for f in result["findings"] if f["code"] == "float64-on-device"}


def test_float64_is_found_where_it_comes_onto_the_device(tmp_path):
    if not simulated.is_supported():
        pytest.skip("the simulated accelerator needs torch >= 2.11")
    assert float64_lines(tmp_path, "sim:1") == MADE


def test_float64_on_the_cpu_is_not_a_finding(tmp_path):
    assert float64_lines(tmp_path, "cpu") == set()
