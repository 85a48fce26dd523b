import subprocess
import sys

ROOT = __file__.rsplit("/tests/", 1)[0]
MSG = ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
       "float64. Please use float32 instead.")


def test_mps_profile_rejects_float64_in_subprocess():
    code = r'''
import torch, grader.simulated as gs
gs.install(count=1, profile="mps")
print(torch.ones(2, device="sim").sum().item())
for f in (lambda: torch.ones(2, dtype=torch.float64).to("sim"),
          lambda: torch.zeros(2, dtype=torch.float64, device="sim"),
          lambda: torch.ones(2, device="sim").double()):
    try:
        f(); print("no error")
    except TypeError as e:
        print("TypeError|" + str(e))
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0, r.stderr
    assert lines[0] == "2.0"
    assert lines[1:] == ["TypeError|" + MSG] * 3
