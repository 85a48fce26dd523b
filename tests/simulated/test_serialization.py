"""Checkpoints of sim tensors (grader/simulated/serialization.py) in the situations the other checkpoint tests
(test_training.py, test_reported_differences.py) do not reach. (Written for the mutation report, issue 31.)"""

import io
import subprocess
import sys

import torch

from tests.simulated.test_training import MISSING, ROOT


def test_views_saved_together_load_as_views_of_one_storage():
    base = torch.arange(6.0, device="sim:1")
    buf = io.BytesIO()
    torch.save({"whole": base, "tail": base[2:], "again": base[2:]}, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    assert [t.device for t in loaded.values()] == [torch.device("sim:1")] * 3
    assert loaded["tail"].cpu().tolist() == [2.0, 3.0, 4.0, 5.0]
    loaded["whole"].add_(1)  # one storage, as torch.load gives for CUDA tensors saved together
    assert loaded["tail"].cpu().tolist() == [3.0, 4.0, 5.0, 6.0] == loaded["again"].cpu().tolist()
    buf.seek(0)
    moved = torch.load(buf, map_location="sim:0")
    moved["tail"].zero_()
    assert moved["whole"].cpu().tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0] and moved["whole"].device.index == 0


def test_a_callable_map_location_gives_the_storage_it_returns():
    """As for a CUDA checkpoint: the loaded tensor lives in the storage map_location returned, not in a copy."""
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0, device="sim:0")[1:]}, buf)
    buf.seek(0)
    returned = {}  # location -> the storage returned for it (torch also calls it for the file's CPU copy: "cpu")
    w = torch.load(buf, map_location=lambda storage, loc: returned.setdefault(loc, storage.clone()))["w"]
    assert w.device.type == "cpu" and w.tolist() == [1.0, 2.0, 3.0]
    assert w.untyped_storage().data_ptr() == returned["sim:0"].data_ptr() and w.storage_offset() == 1


def test_a_checkpoint_loaded_where_no_device_is_usable_says_what_cuda_says():
    """A CUDA wheel on a machine without a GPU (gs.unusable()): torch.load says is_available() is False, for a
    checkpoint saved on the device and for map_location naming it, not "device 0 but device_count() is 0"."""
    import grader.simulated as gs

    saved, plain = io.BytesIO(), io.BytesIO()
    torch.save({"w": torch.ones(2, device="sim:0")}, saved)
    torch.save({"w": torch.ones(2)}, plain)
    with gs.unusable():
        for buf, where in ((saved, None), (saved, "sim"), (plain, "sim"), (plain, "sim:0")):
            buf.seek(0)
            try:
                torch.load(buf, map_location=where)
            except RuntimeError as e:
                assert str(e) == MISSING, where
            else:
                raise AssertionError(f"loaded with map_location={where!r} where no device is usable")
        saved.seek(0)
        assert torch.load(saved, map_location="cpu")["w"].device.type == "cpu"


def test_a_weights_only_load_before_the_simulators_import_does_not_keep_torchs_rebuild(tmp_path):
    """torch caches the functions a weights_only load may call, on its first such load: a process that loaded a
    checkpoint before importing grader.simulated must still get the simulator's rebuild (CUDA's text where sim
    is not installed, not torch's "Expected one of cpu, cuda, ... device type at start of device string: sim")."""
    path, plain = tmp_path / "sim.pt", tmp_path / "cpu.pt"
    torch.save({"w": torch.ones(2, device="sim:0")}, path)
    torch.save({"w": torch.ones(2)}, plain)
    code = (f"import torch\nprint(torch.load({str(plain)!r}, weights_only=True)['w'].device)\n"
            "import grader.simulated\n"
            f"try:\n    torch.load({str(path)!r}, weights_only=True)\nexcept RuntimeError as e:\n    print(repr(str(e)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.splitlines() == ["cpu", repr(MISSING)], r.stderr
