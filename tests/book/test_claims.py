"""The claims ledger (issue 28): every sentence of the book that states how PyTorch, CUDA or a library behaves
is backed by something that runs, and an unbacked one fails here, by file and line.

A page marks such a sentence with `<!-- claim: ID -->` right after it; tests/book/claims.toml says what backs
each ID: a pattern in the page's current GPU record, a condition on the values it glued, or a test below that
exercises the claim on this machine. A record that is stale (its cell keys no longer match the code) backs
nothing, so editing a cell without recording it again unbacks its claims.
"""

import ast
import importlib.util
import json
import operator
import pathlib
import re
import tomllib

import numpy
import pytest
import torch
import torch.distributed.run as torchrun

from grader import ROOT
from grader.catalog import course
from grader.authoring import book
from tests.book.pages import PAGES, PAGES_WITHOUT_CODE, current_records, stored_record

LEDGER = tomllib.loads((ROOT / "tests" / "book" / "claims.toml").read_text())
CLAIMS = LEDGER["claims"]
BACKINGS = ("shows", "glued", "test", "awaits")
# Hardware none of the book's recording machines has; a claim only it can show `awaits` it (see below).
HARDWARE = {"mps": "an Apple Silicon Mac (MPS)", "rocm": "an AMD GPU with PyTorch for ROCm",
            "xpu": "an Intel GPU with PyTorch for XPU", "npu": "an Ascend NPU with torch_npu"}


def markers() -> list[tuple[str, int, str]]:
    """(page file, line, claim id) of every marker in the book's pages (devcourse dev check reads them so too)."""
    return book.markers(PAGES)


def test_every_marked_claim_is_in_the_ledger():
    unbacked = [f"book/{name}:{line}: {cid}" for name, line, cid in markers() if cid not in CLAIMS]
    assert not unbacked, ("claims marked in the book with no backing in tests/book/claims.toml:\n  "
                          + "\n  ".join(unbacked))


def test_every_ledger_entry_is_marked_in_the_book():
    marked = {cid for _, _, cid in markers()}
    orphans = sorted(set(CLAIMS) - marked)
    assert not orphans, f"tests/book/claims.toml backs claims no page marks any more: {orphans}"


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_the_entry_names_a_backing(cid):
    entry = CLAIMS[cid]
    assert entry.get("says"), f"claim {cid}: say what it claims (says = ...)"
    assert any(k in entry for k in BACKINGS), f"claim {cid}: no backing ({', '.join(BACKINGS)})"
    if "shows" in entry or "glued" in entry:
        assert entry.get("page"), f"claim {cid}: shows/glued need the page whose record backs it"
    if "test" in entry:
        assert callable(globals().get(entry["test"])), f"claim {cid}: tests/book/test_claims.py has no {entry['test']}"
    if "awaits" in entry:
        unknown = [h for h in as_list(entry["awaits"]) if h not in HARDWARE]
        assert not unknown, f"claim {cid}: awaits unknown hardware {unknown} (one of {sorted(HARDWARE)})"
        assert "source" in entry, f"claim {cid}: a claim that awaits hardware names the source line that makes it"
    if "source" in entry or "quote" in entry:
        sources, quotes = as_list(entry.get("source")), as_list(entry.get("quote"))
        assert sources and quotes and (len(sources) == 1 or len(sources) == len(quotes)), \
            f"claim {cid}: quotes for one source, or one quote per source"


def recorded_outputs(page_stem: str) -> tuple[list[str], dict[str, float], dict]:
    """The text of the page's current recorded outputs, its glued values, and its machine."""
    page = ROOT / "book" / f"{page_stem}.md"
    texts, glued = [], {}
    for _, rec in current_records(page):
        if rec is None:
            continue
        for out in rec["outputs"]:
            if "scrapbook" in out.get("metadata", {}):
                value = next(iter(out["data"].values()))
                glued[out["metadata"]["scrapbook"]["name"]] = ast.literal_eval(value)
            else:
                text = out.get("text") or out.get("data", {}).get("text/plain") or ""
                if out.get("output_type") == "error":  # as a traceback's last line: "AcceleratorError: CUDA error: ..."
                    text = f"{out.get('ename', '')}: {out.get('evalue', '')}"
                texts.append("".join(text) if isinstance(text, list) else text)
    return texts, glued, stored_record(page).get("hardware", {})


_OPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Add: operator.add, ast.Sub: operator.sub,
        ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(condition: str, glued: dict[str, float]):
    """A condition such as "a_speedup > 1" or "x == y + 1" over glued values (names, numbers, + - * /,
    comparisons); a name the record did not glue raises KeyError."""
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            return glued[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Compare):
            left, result = value(node.left), True
            for op, right in zip(node.ops, node.comparators):
                right = value(right)
                result = result and _OPS[type(op)](left, right)
                left = right
            return result
        raise ValueError(f"not allowed in a ledger condition: {ast.dump(node)}")
    return value(ast.parse(condition, mode="eval").body)


RECORD_BACKED = sorted(cid for cid, e in CLAIMS.items() if "shows" in e or "glued" in e)


@pytest.mark.parametrize("cid", RECORD_BACKED)
def test_the_record_shows_the_claim(cid):
    entry = CLAIMS[cid]
    texts, glued, hardware = recorded_outputs(entry["page"])
    assert hardware.get("gpus"), f"claim {cid}: book/_recorded/{entry['page']}.json was not recorded on a GPU"
    missing = [p for p in entry.get("shows", []) if not any(re.search(p, t) for t in texts)]
    assert not missing, (f"claim {cid} ({entry['says']}): no current output of {entry['page']}.md matches "
                         f"{missing} (record the page again, or correct the claim)")
    for condition in entry.get("glued", []):
        try:
            holds = evaluate(condition, glued)
        except KeyError as name:
            pytest.fail(f"claim {cid}: the current record of {entry['page']}.md glued no {name}")
        assert holds, (f"claim {cid} ({entry['says']}): {condition} does not hold for the recorded values "
                       f"{ {k: glued[k] for k in glued if k in condition} }; the prose no longer describes the record")


def test_chapters_not_yet_reviewed_are_listed():
    """Which chapters the ledger covers: a chapter is `reviewed` once every behavioural sentence in it is marked.
    The others are reported here (not failed) until then."""
    chapters = [p.stem for p in PAGES if p.stem not in {"hardware-status", "instructors"}]
    unknown = sorted(set(LEDGER.get("reviewed", [])) - set(chapters))
    assert not unknown, f"claims.toml lists as reviewed pages that are not chapters of the book: {unknown}"
    pending = [c for c in chapters if c not in LEDGER.get("reviewed", [])]
    if pending:
        pytest.skip(f"not yet reviewed for the claims ledger: {', '.join(pending)}")


# The claims backed by running them here rather than by a GPU record.

def test_torchrun_default_rendezvous_is_static():
    """multi-gpu.md: without --rdzv-backend, torchrun uses `static`, which takes each node's rank from --node-rank
    (0 unless given) and not from --rdzv-id; with c10d the rendezvous assigns the ranks."""
    same_command = ["--nnodes=2", "--nproc-per-node=8", "--rdzv-endpoint=host:29400", "--rdzv-id=job", "train.py"]
    args = torchrun.get_args_parser().parse_args(same_command)
    assert args.rdzv_backend == "static"
    config, _, _ = torchrun.config_from_args(args)
    assert config.rdzv_configs.get("rank") == 0  # the same on every node that runs this command
    c10d, _, _ = torchrun.config_from_args(torchrun.get_args_parser().parse_args(["--rdzv-backend=c10d", *same_command]))
    assert "rank" not in c10d.rdzv_configs


def test_every_chapter_has_graded_exercises():
    """intro.md: every chapter ends with graded exercises (course.toml) and lists them (course-exercises)."""
    chapters = [p for p in PAGES if p.stem not in PAGES_WITHOUT_CODE]
    without = [p.stem for p in chapters if not course.for_chapter(p.stem)]
    assert not without, f"chapters with no graded exercise in course.toml: {without}"
    unlisted = [p.stem for p in chapters if "```{course-exercises}" not in p.read_text()]
    assert not unlisted, f"chapters that do not list their exercises: {unlisted}"


def test_ledger_conditions_are_read_as_numbers():
    # The evaluator is what turns "faster" into a number test: it must compare, add, and refuse anything else.
    assert evaluate("a > 1", {"a": 1.5}) and not evaluate("a > 1", {"a": 0.5})
    assert evaluate("a == b + 1", {"a": 5.0, "b": 4.0})
    with pytest.raises(KeyError):
        evaluate("missing < 1", {})
    with pytest.raises(ValueError):
        evaluate("__import__('os')", {})
    assert json.loads(json.dumps(CLAIMS))  # plain data only


# tensors-and-devices.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_device_objects_need_no_hardware():
    """A torch.device names a device without touching one: CUDA devices can be made on a build without CUDA."""
    assert not torch.backends.cuda.is_built()
    for spec, (kind, index) in {"cpu": ("cpu", None), "cuda": ("cuda", None), "cuda:1": ("cuda", 1)}.items():
        d = torch.device(spec)
        assert (d.type, d.index) == (kind, index)
    assert torch.device("cuda", 1) == torch.device("cuda:1")


def test_meta_tensors_hold_no_data():
    """A meta tensor has a shape and a dtype, a storage with a size and no memory, and computes only shapes;
    this CPU-only build has the device."""
    m = torch.randn(2, 3, device="meta")
    assert (m.shape, m.dtype) == ((2, 3), torch.float32)
    assert m.untyped_storage().nbytes() == 24 and m.data_ptr() == 0
    assert (m @ torch.randn(3, 5, device="meta")).shape == (2, 5)
    with pytest.raises(NotImplementedError, match="no data"):
        m.tolist()


def test_factories_take_a_device_and_sharing_ones_do_not():
    """The factory functions accept device=; those that share memory with an existing object have none."""
    made = [torch.zeros(2, device="cpu"), torch.ones(2, device="cpu"), torch.empty(2, device="cpu"),
            torch.full((2,), 1.0, device="cpu"), torch.randn(2, device="cpu"), torch.rand(2, device="cpu"),
            torch.randint(3, (2,), device="cpu"), torch.arange(2, device="cpu"), torch.linspace(0, 1, 2, device="cpu"),
            torch.eye(2, device="cpu"), torch.tensor([1, 2], device="cpu"), torch.as_tensor([1, 2], device="cpu"),
            torch.randperm(2, device="cpu"), torch.zeros_like(torch.ones(2), device="meta")]
    assert [t.device.type for t in made] == ["cpu"] * (len(made) - 1) + ["meta"]
    with pytest.raises(TypeError):
        torch.from_numpy(numpy.zeros(2), device="cpu")
    with pytest.raises(TypeError):
        torch.frombuffer(bytearray(8), dtype=torch.float32, device="cpu")


def test_missing_device_on_a_cpu_build():
    """A build without CUDA refuses a CUDA device with AssertionError; the GPU's AcceleratorError is a RuntimeError."""
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.randn(3, device="cuda:99")
    assert issubclass(torch.AcceleratorError, RuntimeError)


def test_name_of_a_gpu_a_cpu_build_lacks():
    with pytest.raises(AssertionError):
        torch.cuda.get_device_name(0)


def test_a_cpu_build_reports_no_cuda():
    """torch.version.cuda is None and backends.cuda.is_built() False on a CPU-only wheel, and CUDA is unavailable."""
    assert torch.__version__.endswith("+cpu")
    assert torch.version.cuda is None and not torch.backends.cuda.is_built()
    assert not torch.cuda.is_available() and torch.cuda.device_count() == 0


def test_visible_devices_renumber_in_the_multi_gpu_record():
    """multi-gpu.md's record: a process started with CUDA_VISIBLE_DEVICES='1,0' sees the two GPUs swapped."""
    texts, _, hardware = recorded_outputs("multi-gpu")
    assert len(hardware.get("gpus", [])) >= 2, "multi-gpu.md was not recorded with two GPUs"
    lists = {}
    for text in texts:
        m = re.search(r"(this process|CUDA_VISIBLE_DEVICES='1,0'):\s+2 (\[.*\])", text)
        if m:
            lists[m.group(1)] = ast.literal_eval(m.group(2))
    assert len(lists) == 2, f"the record shows no pair of GPU lists to compare: {lists}"
    assert lists["CUDA_VISIBLE_DEVICES='1,0'"] == lists["this process"][::-1]
    ones = [ast.literal_eval(m.group(1)) for t in texts for m in [re.search(r"CUDA_VISIBLE_DEVICES='1': 1 (\[.*\])", t)] if m]
    assert ones == [lists["this process"][1:]], f"with CUDA_VISIBLE_DEVICES='1' the record shows {ones}"


def _in_a_fresh_process(code: str) -> None:
    """Run `code` in a Python of its own: a test of this suite that ran earlier in this process may have
    installed the simulated accelerator, which is process-wide and for good (torch.accelerator then has one)."""
    import subprocess
    import sys
    import textwrap

    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)  # the repository root, so that the course's own packages import
    assert done.returncode == 0, done.stderr[-3000:]


def test_accelerator_api_on_a_cpu_build():
    """torch.accelerator on a CPU-only build: no accelerator, count 0; the index functions refuse; None is a no-op."""
    _in_a_fresh_process("""
        import re, torch
        assert torch.accelerator.current_accelerator() is None
        assert torch.accelerator.current_accelerator(check_available=True) is None
        assert not torch.accelerator.is_available() and torch.accelerator.device_count() == 0
        message = "Cannot access accelerator device when none is available."
        for attempt in (torch.accelerator.current_device_index, lambda: torch.accelerator.device_index(0).__enter__()):
            try:
                attempt()
            except RuntimeError as exc:
                assert message in str(exc), exc
            else:
                raise AssertionError("no error")
        with torch.accelerator.device_index(None):
            pass
    """)


def test_a_tensors_device_is_read_only():
    x = torch.zeros(2)
    with pytest.raises(AttributeError):
        x.device = torch.device("meta")
    assert x.device.type == "cpu"


# moving-tensors.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_cuda_method_needs_a_cuda_build():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.zeros(2).cuda()


def test_module_to_changes_the_module_in_place():
    """model.to(...) converts the parameters in place, returns the module itself, and its parameters stay leaves."""
    model = torch.nn.Linear(2, 2)
    weight = model.weight
    assert model.to(torch.float64) is model
    assert model.weight is weight and weight.dtype == torch.float64 and weight.is_leaf


def test_a_moved_tensor_is_not_a_leaf():
    """A tensor converted after requires_grad=True is not a leaf: backward leaves its .grad None (with a warning)
    and fills the original's."""
    original = torch.randn(3, requires_grad=True)
    moved = original.to(torch.float64)
    assert not moved.is_leaf and type(moved.grad_fn).__name__ == "ToCopyBackward0"
    moved.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert moved.grad is None
    assert original.grad is not None and original.grad.dtype == torch.float32
    assert torch.randn(3).to(torch.float64).requires_grad_().is_leaf


def test_copy_into_existing_storage_takes_non_blocking():
    dst, src = torch.zeros(2, 3), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    address = dst.data_ptr()
    assert dst.copy_(src, non_blocking=True) is dst
    assert dst.data_ptr() == address and dst.dtype == torch.float32 and dst.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_default_device_scope_threads_and_processes():
    """set_default_device holds in the calling thread only; an explicit device= wins; a spawned process starts
    from the CPU, a forked one inherits the default; DataLoader workers are forked here (Linux, Python < 3.14)."""
    import multiprocessing
    import sys
    import threading
    torch.set_default_device("meta")
    try:
        in_thread = []
        thread = threading.Thread(target=lambda: in_thread.append(torch.zeros(2).device.type))
        thread.start()
        thread.join()
        assert torch.zeros(2).device.type == "meta" and torch.zeros(2, device="cpu").device.type == "cpu"
        assert in_thread == ["cpu"]
        existing = torch.ones(1, device="cpu")
        assert existing.device.type == "cpu"
        for method in ("fork", "spawn"):
            queue = multiprocessing.get_context(method).SimpleQueue()
            child = multiprocessing.get_context(method).Process(target=_report_default_device, args=(queue,))
            child.start()
            child.join(timeout=120)
            assert queue.get() == {"fork": "meta", "spawn": "cpu"}[method], method
    finally:
        torch.set_default_device(None)
    with torch.device("meta"):
        pass
    assert torch.get_default_device().type == "cpu"
    if sys.platform == "linux" and sys.version_info < (3, 14):
        assert multiprocessing.get_start_method() == "fork"


def _report_default_device(queue):
    queue.put(torch.zeros(2).device.type)


def test_a_model_built_on_meta_has_no_memory():
    with torch.device("meta"):
        model = torch.nn.Linear(4096, 4096)
    assert model.weight.is_meta and model.weight.data_ptr() == 0 and model.weight.untyped_storage().data_ptr() == 0


def test_default_device_intercepts_every_torch_call(monkeypatch):
    """The default device is a torch-function mode: it sees every torch call, factories or not (the documented
    per-call overhead)."""
    from torch.utils._device import DeviceContext
    seen = []
    intercept = DeviceContext.__torch_function__

    def counting(self, func, types, args=(), kwargs=None):
        seen.append(func)
        return intercept(self, func, types, args, kwargs)

    monkeypatch.setattr(DeviceContext, "__torch_function__", counting)
    with torch.device("cpu"):
        a = torch.ones(2)
        torch.add(a, 1)
        a.sum()
    assert torch.add in seen and torch.Tensor.sum in seen
    assert "performance cost on every Python" in torch.set_default_device.__doc__


# device-mismatch.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_meta_and_cpu_do_not_mix():
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        torch.randn(3, device="meta") + torch.randn(3)


def test_module_to_skips_plain_tensor_attributes():
    """model.to() moves parameters and buffers, not a tensor kept as a plain attribute."""
    model = torch.nn.Linear(2, 2)
    model.register_buffer("table", torch.zeros(2))
    model.plain = torch.zeros(2)
    model.to("meta")
    assert model.weight.is_meta and model.table.is_meta and model.plain.device.type == "cpu"


def test_like_and_new_functions_inherit_from_their_tensor():
    x = torch.randn(2, 3, device="meta", dtype=torch.float16)
    for made in (torch.ones_like(x), torch.randn_like(x)):
        assert (made.shape, made.dtype, made.device) == (x.shape, x.dtype, x.device)
    zeros = x.new_zeros(5, 1)
    assert (zeros.shape, zeros.dtype, zeros.device) == ((5, 1), x.dtype, x.device)
    positions = torch.arange(4, device=x.device)
    assert positions.device == x.device and positions.dtype == torch.int64


# models-and-buffers.md, on this machine's CPU-only build (module bookkeeping is the same on every device; the
# GPU side is in the page's record).

class _AllKinds(torch.nn.Module):
    """A parameter, a persistent and a non-persistent buffer, an integer and a boolean buffer, a plain tensor
    attribute, a list of tensors and a submodule."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))
        self.register_buffer("saved", torch.zeros(2))
        self.register_buffer("derived", torch.ones(2), persistent=False)
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("mask", torch.ones(2, dtype=torch.bool))
        self.plain = torch.ones(2)
        self.listed = [torch.zeros(2)]
        self.sub = torch.nn.Linear(2, 2)


def test_module_to_converts_what_is_registered_only():
    """model.to walks submodules, converts parameters, their gradients and buffers, floating point only for a
    dtype; plain attributes and tensors in a list are untouched; .half() is the same conversion."""
    m = _AllKinds()
    m.weight.grad = torch.ones(2)
    m.to(torch.float64)
    assert m.weight.dtype == m.weight.grad.dtype == m.sub.weight.dtype == m.saved.dtype == m.derived.dtype == torch.float64
    assert (m.count.dtype, m.mask.dtype) == (torch.int64, torch.bool)
    assert m.plain.dtype == m.listed[0].dtype == torch.float32
    m.half()
    assert m.saved.dtype == torch.float16 and m.count.dtype == torch.int64 and m.plain.dtype == torch.float32
    m.to("meta")
    assert m.weight.is_meta and m.sub.weight.is_meta and m.saved.is_meta and m.derived.is_meta and m.count.is_meta
    assert m.plain.device.type == "cpu" and m.listed[0].device.type == "cpu"


def test_what_a_module_registers_and_saves():
    """Parameters and submodules register on assignment; parameters() holds parameters only, with gradients by
    default; state_dict() parameters and persistent buffers; plain attributes nowhere; a model has no .device."""
    m = _AllKinds()
    assert [n for n, _ in m.named_parameters()] == ["weight", "sub.weight", "sub.bias"]
    assert [n for n, _ in m.named_buffers()] == ["saved", "derived", "count", "mask"]
    assert list(m.state_dict()) == ["weight", "saved", "count", "mask", "sub.weight", "sub.bias"]
    assert all(p.requires_grad for p in m.parameters()) and not any(b.requires_grad for b in m.buffers())
    assert not hasattr(m, "device")
    with pytest.raises(StopIteration):
        next(torch.nn.ReLU().parameters())


def test_buffer_names_stay_buffers_and_plain_names_are_refused():
    m = _AllKinds()
    m.saved = torch.full((3,), 7.0)               # assigning to a registered name keeps it a buffer
    assert "saved" in dict(m.named_buffers()) and "saved" in m.state_dict()
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", torch.ones(2))


def test_a_saved_persistent_mask_breaks_a_new_length():
    """A persistent buffer whose shape depends on the constructor makes load_state_dict fail for another shape;
    a 4096 x 4096 boolean mask is 16 MiB."""
    def masked(length, persistent):
        m = torch.nn.Module()
        m.register_buffer("mask", torch.ones(length, length, dtype=torch.bool), persistent=persistent)
        return m
    with pytest.raises(RuntimeError, match="size mismatch for mask"):
        masked(16, True).load_state_dict(masked(8, True).state_dict())
    masked(16, False).load_state_dict(masked(8, False).state_dict())
    assert torch.ones(4096, 4096, dtype=torch.bool).nbytes == 16 * 2**20


def test_parameters_kept_on_conversion_but_not_to_meta_and_optimizer_state_stays():
    """A dtype conversion keeps each Parameter object (so does a CPU-GPU move: the page's record), a move to meta
    makes new ones; optimizer state made before is not converted by model.to()."""
    model = torch.nn.Linear(2, 2)
    weight = model.weight
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(3, 2)).sum().backward()
    optimizer.step()
    model.to(torch.float64)
    assert model.weight is weight and weight.dtype == torch.float64
    assert optimizer.state[weight]["exp_avg"].dtype == torch.float32
    model.to("meta")
    assert model.weight is not weight


def test_batchnorm_keeps_running_statistics_in_buffers_updated_in_place():
    bn = torch.nn.BatchNorm1d(4)
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert set(bn.state_dict()) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
    address = bn.running_mean.data_ptr()
    bn(torch.randn(64, 4) + 3.0)
    assert bn.running_mean.data_ptr() == address and bn.momentum == 0.1
    assert torch.allclose(bn.running_mean, torch.full((4,), 0.3), atol=0.1)
    bn.half()
    assert bn.num_batches_tracked.dtype == torch.int64 and bn.running_mean.dtype == torch.float16


def test_bfloat16_activations_plus_a_float32_table_give_float32():
    assert (torch.ones(2, dtype=torch.bfloat16) + torch.ones(2)).dtype == torch.float32


# data-loading.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_loader_batches_are_cpu_tensors_in_shared_memory_from_workers():
    from torch.utils.data import DataLoader, TensorDataset
    dataset = TensorDataset(torch.randn(8, 3), torch.arange(8))
    inline = next(iter(DataLoader(dataset, batch_size=4)))
    from_worker = next(iter(DataLoader(dataset, batch_size=4, num_workers=1)))
    assert all(t.device.type == "cpu" for t in (*inline, *from_worker))
    assert all(t.is_shared() for t in from_worker)


def test_loader_pins_inline_or_in_a_one_thread_background_thread(monkeypatch):
    """pin_memory=True: with num_workers=0 the main thread pins each batch; with workers a background thread of
    the main process does, with torch's thread count set to 1 (the accelerator is stood in for: this build has
    none, and pinning itself is replaced by a probe)."""
    import threading
    from torch.utils.data import DataLoader, TensorDataset, _utils
    pins = []

    def probe(data, device=None):
        pins.append((threading.current_thread() is threading.main_thread(), torch.get_num_threads()))
        return data

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda check_available=False: torch.device("cuda"))
    monkeypatch.setattr(torch.accelerator, "current_device_index", lambda: 0)
    monkeypatch.setattr(torch.accelerator, "set_device_index", lambda index: None)
    monkeypatch.setattr(_utils.pin_memory, "pin_memory", probe)
    dataset = TensorDataset(torch.randn(8, 3))
    assert len(list(DataLoader(dataset, batch_size=4, pin_memory=True))) == 2
    assert pins == [(True, torch.get_num_threads())] * 2
    pins.clear()
    assert len(list(DataLoader(dataset, batch_size=4, pin_memory=True, num_workers=1))) == 2
    assert pins == [(False, 1)] * 2


def test_loader_without_an_accelerator_warns_and_does_not_pin():
    _in_a_fresh_process("""
        import warnings, torch
        from torch.utils.data import DataLoader, TensorDataset
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            batch, = next(iter(DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2, pin_memory=True)))
        assert any("no accelerator is found" in str(w.message) for w in seen), [str(w.message) for w in seen]
        assert not batch.is_pinned()
    """)


# numpy.md, on this machine's CPU-only build (its GPU side is in the page's record).

@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # NumPy 2 on torch's __array__
def test_numpy_takes_cpu_tensors_only_through_every_door():
    for convert in (lambda t: t.numpy(), numpy.asarray, numpy.array):
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy. Use Tensor.cpu()"):
            convert(torch.zeros(2, device="meta"))


def test_numpy_reductions_call_the_tensors_method():
    for reduce in (numpy.mean, numpy.sum):
        with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
            reduce(torch.ones(3))


def test_detach_cpu_numpy_copy_nothing_on_the_cpu():
    w = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        (w * 2).numpy()
    detached = w.detach()
    assert not detached.requires_grad and detached.grad_fn is None and detached.data_ptr() == w.data_ptr()
    assert detached.cpu() is detached
    array = detached.numpy()
    array[0] = 42.0
    assert w[0].item() == 42.0


def test_from_numpy_shares_until_something_allocates():
    a = numpy.arange(5, dtype=numpy.float32)
    t = torch.from_numpy(a)
    a[0] = -1.0
    t[1] += 100.0
    assert t.tolist()[:2] == [-1.0, 101.0] and a.tolist()[:2] == [-1.0, 101.0] and t.data_ptr() == a.ctypes.data
    for made in (t * 2, t.to(torch.float64), t.to("meta")):
        assert made.device.type == "meta" or made.data_ptr() != a.ctypes.data


def test_from_numpy_keeps_float64_which_a_float32_model_refuses():
    x = torch.from_numpy(numpy.random.rand(4, 3))
    assert x.dtype == torch.float64 and torch.tensor(numpy.random.rand(2)).dtype == torch.float64
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Double and Float"):
        torch.nn.Linear(3, 2)(x)
    assert torch.nn.Linear(3, 2)(torch.as_tensor(x.numpy(), dtype=torch.float32)).dtype == torch.float32


def test_from_numpy_refuses_negative_strides_and_warns_on_read_only():
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(numpy.arange(4.0)[::-1])
    frozen = numpy.arange(3.0)
    frozen.setflags(write=False)
    with pytest.warns(UserWarning, match="not writable"):
        torch.from_numpy(frozen)


def test_numpy_force():
    """force=True is documented as detach().cpu().resolve_conj().resolve_neg().numpy(); a plain CPU tensor still
    shares its storage, a lazily conjugated one is resolved."""
    assert "t.detach().cpu().resolve_conj().resolve_neg().numpy()" in torch.Tensor.numpy.__doc__
    w = torch.ones(3, requires_grad=True)
    assert numpy.shares_memory(w.numpy(force=True), w.detach().numpy())
    z = torch.tensor([1 + 2j, 3 - 1j]).conj()
    with pytest.raises(RuntimeError):
        z.numpy()
    assert z.is_conj() and z.numpy(force=True).tolist() == [1 - 2j, 3 + 1j]


def test_which_conversions_copy():
    src = numpy.ones(3)
    shares = lambda t: numpy.shares_memory(t.numpy(), src)  # noqa: E731
    assert not shares(torch.tensor(src)) and not shares(torch.tensor(torch.from_numpy(src)).detach())
    assert shares(torch.as_tensor(src)) and not shares(torch.as_tensor(src, dtype=torch.float32))
    assert shares(torch.from_numpy(src)) and shares(torch.asarray(src, copy=False))
    assert not shares(torch.asarray(src, copy=True))
    with pytest.raises(ValueError):
        torch.asarray(src, dtype=torch.float32, copy=False)
    assert torch.as_tensor(src, device="meta").is_meta



def test_as_tensor_with_a_dtype_and_a_device_is_one_blocking_to():
    """numpy.md: as_tensor(array, dtype, device) converts and moves with a single _to_copy that is not
    non-blocking, the call moving-tensors.md's record shows converting on the CPU before the copy
    (meta stands in for the device here)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append((func, kwargs or {}))
            return func(*args, **(kwargs or {}))

    with Calls() as calls:
        moved = torch.as_tensor(numpy.random.rand(4, 2), dtype=torch.float32, device="meta")
    copies = [kwargs for func, kwargs in calls.seen if func is torch.ops.aten._to_copy.default]
    assert copies == [{"dtype": torch.float32, "device": torch.device("meta")}], calls.seen
    assert (moved.dtype, moved.device.type) == (torch.float32, "meta")

# asynchrony.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_perf_counter_is_monotonic_and_fine_time_is_adjustable():
    import time
    perf, wall = time.get_clock_info("perf_counter"), time.get_clock_info("time")
    assert perf.monotonic and perf.resolution < 1e-6
    assert wall.adjustable and not wall.monotonic


def test_benchmark_timer_synchronises_at_each_clock_reading_and_uses_one_thread(monkeypatch):
    from torch.utils import benchmark
    from torch.utils.benchmark.utils import timer as timer_module
    synchronised = []
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "synchronize", lambda *a: synchronised.append(1))
    timer_module.timer()
    assert synchronised == [1]
    monkeypatch.undo()
    runs = []
    measurement = benchmark.Timer(stmt="runs.append(1)", globals={"runs": runs}).blocked_autorange(min_run_time=0.01)
    assert measurement.num_threads == 1 and measurement.median > 0 and measurement.iqr >= 0
    measured = len(measurement.times) * measurement.number_per_run
    assert len(runs) > measured  # the warm-up that chose the block size ran the statement too


def test_out_of_range_embedding_index_on_the_cpu():
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.Embedding(10, 4)(torch.tensor([3, 12]))


def test_unsynchronised_matmul_timing_in_the_record():
    """asynchrony.md's record: the unsynchronised time of a matmul is microseconds, a small part of the
    synchronised one (read from the record; nothing is timed here)."""
    texts, _, hardware = recorded_outputs("asynchrony")
    assert hardware.get("gpus"), "asynchrony.md was not recorded on a GPU"
    found = [m for t in texts for m in re.finditer(r"without sync ([\d.]+) ms,  with sync ([\d.]+) ms", t)]
    assert found, "the current record of asynchrony.md shows no timing line"
    unsynced, synced = (float(v) for v in found[0].groups())
    assert unsynced < 0.1 and unsynced * 10 < synced


# memory.md (partly reviewed): CPU tests, and checks read from the page's GPU record (nothing is timed here).

def _memory_stages():
    """allocated MiB after each stage of memory.md's training step, from its current record."""
    texts, _, hardware = recorded_outputs("memory")
    assert hardware.get("gpus"), "memory.md was not recorded on a GPU"
    stages = {m.group(1).strip(): float(m.group(2)) for t in texts
              for m in re.finditer(r"^(\w[\w ]+?)\s+allocated\s+([\d.]+) MiB", t, re.M)}
    peaks = {m.group(1): float(m.group(2)) for t in texts
             for m in re.finditer(r"extra peak of a (training step|no_grad forward):\s+([\d.]+) MiB", t)}
    sizes = {m.group(1).strip(): float(m.group(2)) for t in texts
             for m in re.finditer(r"^(parameters|one activation \(batch x width\))\s+([\d.]+) MiB", t, re.M)}
    return stages, peaks, sizes


def test_training_step_memory_in_the_record():
    """The optimizer allocates nothing until its first step, which adds two parameter-sized moments; zero_grad
    frees one parameter size of gradients; forward keeps activations that backward frees."""
    stages, _, sizes = _memory_stages()
    param = sizes["parameters"]
    assert stages["optimizer created"] == stages["model on GPU"]
    assert abs(stages["after optimizer step"] - stages["after backward"] - 2 * param) < 1
    assert abs(stages["after optimizer step"] - stages["after zero_grad"] - param) < 1
    assert stages["after forward"] > stages["batch on GPU"]


def test_no_grad_forward_peak_in_the_record():
    """A no_grad forward of the MLP peaks at two activations (the one computed and the one before)."""
    _, peaks, sizes = _memory_stages()
    activation = sizes["one activation (batch x width)"]
    assert abs(peaks["no_grad forward"] - 2 * activation) < 1 and peaks["training step"] > peaks["no_grad forward"]


def test_device_agnostic_memory_counters_and_snapshot_api_exist():
    import inspect
    assert callable(torch.accelerator.memory_allocated) and callable(torch.accelerator.max_memory_allocated)
    history = inspect.signature(torch.cuda.memory._record_memory_history).parameters
    assert "enabled" in history and "max_entries" in history
    assert "filename" in inspect.signature(torch.cuda.memory._dump_snapshot).parameters


@pytest.mark.parametrize("name", ["PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"])
def test_allocator_configuration_is_read_from_either_name(name):
    import os
    import subprocess
    import sys
    settings = "expandable_segments:True,garbage_collection_threshold:0.8"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")}
    read = subprocess.run([sys.executable, "-c", "import torch; print(torch._C._accelerator_getAllocatorSettings())"],
                          env={**env, name: settings}, capture_output=True, text=True, timeout=300)
    assert read.stdout.strip() == settings, read.stderr[-2000:]


def test_driver_view_exceeds_reserved_in_the_record():
    """memory.md's record: mem_get_info's memory in use (the driver's count) exceeds what the allocator reserved."""
    texts, _, hardware = recorded_outputs("memory")
    assert hardware.get("gpus"), "memory.md was not recorded on a GPU"
    found = [re.search(r"driver view :\s+([\d.]+) MiB in use.*\nPyTorch view:\s+([\d.]+) MiB reserved", t) for t in texts]
    pairs = [(float(m.group(1)), float(m.group(2))) for m in found if m]
    assert pairs, "the current record of memory.md shows no driver view (record the page again)"
    driver, reserved = pairs[0]
    assert driver > reserved


def test_allocator_configuration_is_read_once():
    _in_a_fresh_process("""
        import os, torch
        first = torch._C._accelerator_getAllocatorSettings()
        os.environ["PYTORCH_ALLOC_CONF"] = first + ",expandable_segments:True"
        assert torch._C._accelerator_getAllocatorSettings() == first, first
    """)


def test_zero_grad_sets_gradients_to_none():
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.randn(3, 2)).sum().backward()
    assert model.weight.grad is not None
    optimizer.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_a_kept_exception_keeps_its_frames_tensors():
    import gc
    import weakref

    def failing_step():
        activation = torch.ones(1000)
        watched.append(weakref.ref(activation))
        raise RuntimeError("out of memory")

    watched = []
    try:
        failing_step()
    except RuntimeError as err:
        kept = err
    gc.collect()
    assert watched[0]() is not None                # alive through kept.__traceback__'s frames
    del kept
    gc.collect()
    assert watched[0]() is None


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(torch.OutOfMemoryError, RuntimeError)


# repeated-transfers.md: a check read from the page's record, and the CPU build's device modules.

def test_round_trip_is_slower_in_the_record():
    texts, _, hardware = recorded_outputs("repeated-transfers")
    assert hardware.get("gpus"), "repeated-transfers.md was not recorded on a GPU"
    found = [re.search(r"stay on device :\s+([\d.]+) us per step\nround trip     :\s+([\d.]+) us per step", t) for t in texts]
    pairs = [(float(m.group(1)), float(m.group(2))) for m in found if m]
    assert pairs, "the current record of repeated-transfers.md shows no round-trip timing"
    stay, round_trip = pairs[0]
    assert round_trip > stay


def test_sync_debug_mode_is_cuda_only():
    assert callable(torch.cuda.set_sync_debug_mode)
    assert not [m.__name__ for m in (torch.accelerator, torch.mps, torch.xpu, torch.mtia)
                if hasattr(m, "set_sync_debug_mode")]


# debugging.md: the CPU side of a buffer assigned later, and the traceback of the page's record.

def test_a_none_buffer_assigned_later_moves_with_the_module():
    class Smoother(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("state", None, persistent=False)

    smoother = Smoother()
    smoother.state = torch.zeros(3)
    assert [name for name, _ in smoother.named_buffers()] == ["state"]
    smoother.to(torch.float64)
    assert smoother.state.dtype == torch.float64 and "state" not in smoother.state_dict()


def test_mismatch_traceback_ends_at_the_failing_line_in_the_record():
    """debugging.md's record: the last frame of the traceback outside torch's own files is forward's line
    that adds self.pos (the mismatch is raised on the host, at the line)."""
    page = ROOT / "book" / "debugging.md"
    errors = [out for _, rec in current_records(page) if rec for out in rec["outputs"] if out.get("output_type") == "error"]
    assert errors, "the current record of debugging.md shows no traceback"
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    frames = [ansi.sub("", frame) for frame in errors[0]["traceback"]]
    ours = [frame for frame in frames if "site-packages/torch" not in frame and ("line" in frame or "forward" in frame)]
    assert ours and "forward" in ours[-1] and "self.pos" in ours[-1], ours[-1:]


# intro.md: the course's own simulated accelerator (in a process of its own: installing it is for good).

def test_simulated_accelerator_refuses_a_tensor_left_on_the_cpu():
    _in_a_fresh_process("""
        from grader import simulated
        simulated.install()
        import torch
        for mix, message in [
                (lambda: torch.ones(2, device="sim") + torch.ones(2),
                 "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu!"),
                (lambda: torch.nn.Linear(2, 2).to("sim")(torch.ones(3, 2)),
                 "but got mat1 is on cpu, different from other tensors on sim:0 (when checking argument in method wrapper_SIM_addmm)")]:
            try:
                mix()
            except RuntimeError as err:
                assert message in str(err), err
            else:
                raise AssertionError("the simulated accelerator took a CPU tensor")
    """)


# mps-and-accelerators.md, on this machine's CPU-only Linux build (the MPS side needs a Mac: pending).

def test_mps_device_objects():
    assert (torch.device("mps").index, torch.device("mps:0").index) == (None, 0)
    assert torch.device("mps") != torch.device("mps:0")


def test_mps_tensor_on_a_build_without_mps():
    assert not torch.backends.mps.is_built() and not torch.backends.mps.is_available()
    with pytest.raises(NotImplementedError, match="Could not run 'aten::empty.memory_format' with arguments from the 'MPS' backend"):
        torch.randn(2, device="mps")


def test_device_modules_mirror_cuda():
    assert all(callable(getattr(torch.mps, name)) for name in
               ("synchronize", "empty_cache", "current_allocated_memory", "driver_allocated_memory", "manual_seed"))
    assert isinstance(torch.mps.event.Event, type) and torch.mps.Event is torch.mps.event.Event
    assert torch.device("xpu").type == "xpu"
    assert all(callable(getattr(torch.xpu, name)) for name in ("is_available", "synchronize", "memory_allocated"))
    assert all(callable(getattr(torch.accelerator, name)) for name in
               ("synchronize", "device_count", "current_device_index", "set_device_index", "device_index",
                "current_stream", "memory_allocated"))


def test_a_renamed_privateuse1_backend_is_the_accelerator():
    _in_a_fresh_process("""
        import torch
        assert torch._C._get_privateuse1_backend_name() == "privateuseone"
        assert torch.accelerator.current_accelerator() is None
        from grader import simulated
        simulated.install()
        assert torch._C._get_privateuse1_backend_name() == "sim"
        assert torch.accelerator.current_accelerator().type == "sim" and torch.accelerator.is_available()
    """)


# multi-gpu.md, on this machine's CPU (its GPU side is in the page's record, two GPUs).

def test_gloo_reduces_cpu_tensors():
    """multi-gpu.md: Gloo is the backend for CPU tensors (NCCL, for CUDA, is in the page's two-GPU record)."""
    import torch.distributed as dist
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        total = torch.ones(3)
        dist.all_reduce(total)
        assert dist.get_backend() == "gloo" and total.tolist() == [1.0, 1.0, 1.0]
    finally:
        dist.destroy_process_group()


def test_distributed_sampler_shards_and_set_epoch():
    from torch.utils.data import DistributedSampler
    data = list(range(10))
    shards = [list(DistributedSampler(data, num_replicas=2, rank=r, shuffle=True)) for r in (0, 1)]
    assert not set(shards[0]) & set(shards[1]) and sorted(shards[0] + shards[1]) == data
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
    assert list(sampler) == list(sampler)              # no set_epoch: every epoch the same order
    orders = []
    for epoch in range(4):
        sampler.set_epoch(epoch)
        orders.append(list(sampler))
    assert len({tuple(o) for o in orders}) > 1


def test_torchrun_sets_the_process_environment(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "show_env.py"
    # One file per process: two processes printing to one pipe can interleave their lines.
    script.write_text("import os, pathlib, sys\nvalues = [os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
                      "'MASTER_ADDR', 'MASTER_PORT')]\n"
                      "(pathlib.Path(sys.argv[1]) / f'rank{values[0]}.txt').write_text(' '.join(values))\n")
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", "--standalone", str(script), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    rows = sorted(f.read_text().split() for f in tmp_path.glob("rank*.txt"))
    assert [r[:3] for r in rows] == [["0", "0", "2"], ["1", "1", "2"]]
    assert all(r[3] and r[4].isdigit() for r in rows) and rows[0][3:] == rows[1][3:]



def test_a_pageable_empty_touches_no_page():
    """performance.md: torch.empty of pageable memory only reserves addresses; the pages come when first written
    (the resident set of this process grows at fill_, not at empty). Linux only, as the recording machine."""
    statm = pathlib.Path("/proc/self/statm")
    if not statm.exists():
        pytest.skip("reads the resident set from /proc (Linux)")
    import os
    page = os.sysconf("SC_PAGE_SIZE")
    resident = lambda: int(statm.read_text().split()[1]) * page  # noqa: E731
    size = 128 * 2**20
    before = resident()
    pageable = torch.empty(size, dtype=torch.uint8)
    after_empty = resident()
    pageable.fill_(1)
    after_fill = resident()
    assert after_empty - before < size // 8, (before, after_empty)
    assert after_fill - after_empty > size // 2, (after_empty, after_fill)

# device-agnostic-training.md, on this machine's CPU-only build (its GPU side is in the page's record).

def test_summed_losses_chain_every_steps_graph():
    net = torch.nn.Linear(3, 1)
    total = 0
    first = net(torch.randn(2, 3)).pow(2).mean()
    first.backward()
    total = total + first
    second = net(torch.randn(2, 3)).pow(2).mean()
    second.backward()
    total = total + second
    assert total.grad_fn is not None
    reached, stack = set(), [total.grad_fn]
    while stack:                                   # every node still reachable from the running total
        node = stack.pop()
        if node is not None and node not in reached:
            reached.add(node)
            stack.extend(n for n, _ in node.next_functions)
    assert first.grad_fn in reached and second.grad_fn in reached
    assert total.detach().grad_fn is None


def test_module_to_with_nothing_to_move_keeps_storage():
    model = torch.nn.Linear(4, 4)
    addresses = [p.data_ptr() for p in model.parameters()]
    assert model.to("cpu") is model and [p.data_ptr() for p in model.parameters()] == addresses


def test_optimizer_state_follows_the_parameters():
    """AdamW's state is made like each parameter (dtype here; device likewise), and load_state_dict converts
    loaded state to each parameter's dtype and device."""
    model = torch.nn.Linear(2, 2).to(torch.float64)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.randn(3, 2, dtype=torch.float64)).sum().backward()
    optimizer.step()
    assert optimizer.state[model.weight]["exp_avg"].dtype == torch.float64
    on_meta = torch.nn.Linear(2, 2).to("meta")
    loaded = torch.optim.AdamW(on_meta.parameters())
    loaded.load_state_dict(optimizer.state_dict())
    state = loaded.state[on_meta.weight]
    assert state["exp_avg"].is_meta and state["exp_avg"].dtype == torch.float32


def test_loading_a_cuda_checkpoint_without_cuda_names_map_location():
    with pytest.raises(RuntimeError, match=re.escape(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU.")):
        torch.serialization.validate_cuda_device("cuda:0")


def test_map_location_takes_a_device_a_dict_or_a_function():
    import io
    saved = io.BytesIO()
    torch.save({"w": torch.ones(2)}, saved)
    for where in ("meta", torch.device("meta"), {"cpu": "meta"}):
        saved.seek(0)
        assert torch.load(saved, map_location=where, weights_only=True)["w"].is_meta
    locations = []

    def keep(storage, location):                   # called with each storage and the device it was saved from
        locations.append(location)
        return storage

    saved.seek(0)
    assert torch.load(saved, map_location=keep, weights_only=True)["w"].device.type == "cpu" and locations == ["cpu"]


class _Config:
    def __init__(self, width):
        self.width = width


class _Payload:
    def __reduce__(self):
        return (print, ("ran inside torch.load",))


def test_weights_only_load_refuses_code_and_takes_state_dicts():
    """The default (weights_only=True since 2.6) rebuilds tensors, primitives and containers; a global such as
    print is refused; add_safe_globals allows one class; a state_dict loads."""
    import io
    import pickle
    saved = io.BytesIO()
    torch.save({"weights": torch.ones(2), "extra": _Payload()}, saved)
    saved.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL print"):
        torch.load(saved)
    plain = io.BytesIO()
    torch.save({"t": torch.ones(1), "list": [1, 2.0, "a", None], "tuple": (True,), "dict": {"k": 3}}, plain)
    plain.seek(0)
    assert torch.load(plain, weights_only=True)["list"] == [1, 2.0, "a", None]
    configured = io.BytesIO()
    torch.save({"config": _Config(3)}, configured)
    configured.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(configured, weights_only=True)
    configured.seek(0)
    with torch.serialization.safe_globals([_Config]):
        assert torch.load(configured, weights_only=True)["config"].width == 3
    state = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2).state_dict(), state)
    state.seek(0)
    assert set(torch.load(state, weights_only=True)) == {"weight", "bias"}


# Claims only hardware the book is never recorded on can show (an Apple GPU, an AMD or Intel GPU, an Ascend
# NPU). Such an entry `awaits` that hardware and names, in `source` ("owner/repo@commit:path") and `quote` (a
# regular expression), the line of PyTorch (or of the vendor's package) that makes the behaviour. The few
# lines quoted are committed in tests/book/sources/<owner>/<repo>/<path>.txt, with repo, commit and path in
# their header. The quote must match the excerpt; the claim is then reported as a skip that names its markers,
# never as a pass, until a run on that hardware backs it (tools/pending_gpu_claims.py has the code to run).
# `source` may also corroborate a claim that a test or a record backs, without `awaits`.

SOURCES = ROOT / "tests" / "book" / "sources"
SOURCE_SPEC = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{40}):(?P<path>\S+)$")
GAP = "[...]\n"  # stands for the lines an excerpt leaves out


def as_list(value) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def read_excerpt(spec: str) -> tuple[dict, str]:
    """The excerpt a `source` names, checked against its header: (repo, commit, path), and its text."""
    where = SOURCE_SPEC.match(spec)
    assert where, f"source {spec!r} is not owner/repo@<40-hex commit>:path"
    file = SOURCES / where["repo"] / f"{where['path']}.txt"
    assert file.exists(), f"no excerpt {file.relative_to(ROOT)} for {spec}"
    header, _, body = file.read_text().partition("\n----\n")
    fields = dict(re.findall(r"^# (repo|commit|path): (\S+)$", header, re.M))
    assert fields == where.groupdict(), f"{file.relative_to(ROOT)}'s header says {fields}, the ledger {spec}"
    return where.groupdict(), body


def quoted_lines(entry: dict) -> list[tuple[str, str]]:
    """(source, quote) pairs: every quote against a single source, else the n-th quote against the n-th source."""
    sources, quotes = as_list(entry["source"]), as_list(entry["quote"])
    return [(sources[0], q) for q in quotes] if len(sources) == 1 else list(zip(sources, quotes))


def markers_of(cid: str) -> str:
    return ", ".join(f"book/{name}:{line}" for name, line, c in markers() if c == cid)


SOURCED = sorted(cid for cid, e in CLAIMS.items() if "source" in e)


@pytest.mark.parametrize("cid", SOURCED)
def test_the_source_excerpt_says_it(cid):
    for spec, quote in quoted_lines(CLAIMS[cid]):
        _, body = read_excerpt(spec)
        assert re.search(quote, body), f"claim {cid}: the excerpt of {spec} does not match {quote!r}"


def installed_copy(path: str) -> pathlib.Path | None:
    """Where the installed torch keeps a file of its repository: its Python files, and the ATen and c10
    headers it ships under torch/include."""
    package = pathlib.Path(torch.__file__).parent
    if path.startswith("torch/"):
        return package.parent / path
    if path.startswith(("aten/src/", "c10/")) and path.endswith(".h"):
        return package / "include" / path.removeprefix("aten/src/")
    return None


EXCERPTS = sorted({spec for e in CLAIMS.values() for spec in as_list(e.get("source"))})
# Excerpts read at the commit this torch was built from, of files its package ships (the 2.13 CPU wheel here).
OF_THIS_TORCH = [spec for spec in EXCERPTS if spec.startswith(f"pytorch/pytorch@{torch.version.git_version}:")
                 and installed_copy(spec.split(":", 1)[1]) is not None]


@pytest.mark.parametrize("spec", OF_THIS_TORCH)
def test_an_excerpt_of_this_torch_is_in_its_files(spec):
    """An excerpt of this torch's own commit is compared with the installed file itself."""
    where, body = read_excerpt(spec)
    installed = installed_copy(where["path"])
    text = installed.read_text()
    missing = [part for part in body.split(GAP) if part not in text]
    assert not missing, f"{installed} does not contain the excerpt's lines {missing}"


def test_every_excerpt_is_quoted():
    quoted = {SOURCES / spec.split("@")[0] / f"{spec.split(':', 1)[1]}.txt" for spec in EXCERPTS}
    orphans = sorted(str(f.relative_to(ROOT)) for f in SOURCES.rglob("*.txt") if f not in quoted)
    assert not orphans, f"excerpts no claim quotes: {orphans}"


def pending_claims() -> dict[str, str]:
    """Claim id -> the function of tools/pending_gpu_claims.py that would show it."""
    spec = importlib.util.spec_from_file_location("pending_gpu_claims", ROOT / "tools" / "pending_gpu_claims.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {cid: name for name, item in module.PENDING.items() for cid in item.backs}


AWAITING = sorted(cid for cid, e in CLAIMS.items() if "awaits" in e)


@pytest.mark.parametrize("cid", AWAITING)
def test_a_claim_awaiting_hardware_is_reported(cid):
    """Its source must say it and a pending function must be ready to show it; then it is a skip, never a pass."""
    entry = CLAIMS[cid]
    test_the_source_excerpt_says_it(cid)
    assert cid in pending_claims(), f"claim {cid}: no function of tools/pending_gpu_claims.py backs it"
    hardware = " or ".join(HARDWARE[h] for h in as_list(entry["awaits"]))
    pytest.skip(f"awaits a run on {hardware}: {markers_of(cid)} ({entry['says']})")


# mps-and-accelerators.md, continued: what this CPU build can show of the claims above.

def test_meta_and_cpu_tensors_do_not_mix():
    """Not only CUDA: an elementwise op between a meta and a CPU tensor is refused too (in meta's own words)."""
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        torch.ones(2, device="meta") + torch.ones(2)


def test_numpy_float_defaults_are_float64():
    assert numpy.random.rand(2).dtype == numpy.linspace(0, 1, 3).dtype == numpy.array([0.5, 1.5]).dtype == numpy.float64
    assert torch.from_numpy(numpy.random.rand(2)).dtype == torch.float64


def test_warn_once_can_be_made_to_warn_always():
    """TORCH_WARN_ONCE (here torch.cholesky's deprecation) warns once per process, whatever Python's warning
    filter, and every time after torch.set_warn_always(True); a process of its own, as the once is for good."""
    _in_a_fresh_process("""
        import warnings, torch

        def warnings_of_three_calls():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for _ in range(3):
                    torch.cholesky(torch.eye(2))
            return len(caught)

        assert (warnings_of_three_calls(), warnings_of_three_calls()) == (1, 0)
        torch.set_warn_always(True)
        assert warnings_of_three_calls() == 3
    """)


def test_float_sums_depend_on_order():
    values = torch.tensor([1e8, 1.0, -1e8])
    left_to_right = (values[0] + values[1]) + values[2]      # 1e8 + 1 rounds back to 1e8 in float32
    reordered = (values[0] + values[2]) + values[1]
    assert (left_to_right.item(), reordered.item()) == (0.0, 1.0)
    many = torch.randn(100_000, generator=torch.Generator().manual_seed(0))
    forward, backward = many.sum(), many.flip(0).cumsum(0)[-1]
    torch.testing.assert_close(forward, backward)           # equal within a tolerance, if not bit for bit


def test_rename_privateuse1_names_the_device_type():
    _in_a_fresh_process("""
        import torch
        torch.utils.rename_privateuse1_backend("npu")
        assert torch._C._get_privateuse1_backend_name() == "npu"
        assert torch.device("npu:0").type == "npu" and torch.device("npu", 1).index == 1
    """)
    _in_a_fresh_process("""
        import torch
        from grader import simulated
        simulated.install()
        assert torch._C._get_privateuse1_backend_name() == "sim"
        assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::empty.memory_format", "PrivateUse1")
    """)


# at-scale.md

def test_load_without_map_location_restores_the_saved_device():
    import io
    saved = io.BytesIO()
    torch.save({"w": torch.ones(2, device="meta")}, saved)  # a device this CPU build has: meta
    saved.seek(0)
    assert torch.load(saved, weights_only=True)["w"].is_meta  # back where it was saved, with no map_location
    storage = torch.ones(2).untyped_storage()
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.serialization.default_restore_location(storage, "cuda:1")  # the location a GPU run writes


def test_load_state_dict_copies_into_the_parameters():
    model = torch.nn.Linear(3, 2).double()
    before = list(model.parameters())
    model.load_state_dict(torch.nn.Linear(3, 2).state_dict())  # float32 tensors, on the CPU
    assert [p is q for p, q in zip(model.parameters(), before)] == [True, True]
    assert {p.dtype for p in model.parameters()} == {torch.float64}
    with torch.device("meta"):
        on_meta = torch.nn.Linear(3, 2)
    on_meta.load_state_dict(torch.nn.Linear(3, 2).state_dict())  # copied into meta tensors: they stay on meta
    assert all(p.is_meta for p in on_meta.parameters())


def test_a_forward_under_no_grad_or_inference_mode_records_no_graph():
    layer = torch.nn.Linear(3, 2)
    recorded = layer(torch.ones(4, 3))
    assert recorded.grad_fn is not None and recorded.grad_fn._saved_mat1 is not None  # the input, kept for backward
    for mode in (torch.no_grad, torch.inference_mode):
        with mode():
            out = layer(torch.ones(4, 3))
        assert out.grad_fn is None and not out.requires_grad


def test_inference_tensors_have_no_version_counter_and_are_not_saved_for_backward():
    layer = torch.nn.Linear(3, 2)
    with torch.inference_mode():
        out = layer(torch.ones(4, 3))
    assert out.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        out._version
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        torch.nn.Linear(2, 1)(out).sum().backward()


def test_torchrun_ranks_count_across_nodes_and_local_ranks_restart():
    from torch.distributed.elastic.agent.server import api, local_elastic_agent

    class Spec:  # what _assign_worker_ranks reads of a WorkerSpec
        role, local_world_size = "trainer", 2

    store = torch.distributed.HashStore()
    # Two nodes (agents) of two processes: the second node's agent has written its role first.
    store.set("torchelastic/role_info/1", api._RoleInstanceInfo("trainer", 1, 2).serialize())
    workers = [w for node in (0, 1) for w in api.SimpleElasticAgent._assign_worker_ranks(None, store, node, 2, Spec())]
    assert [(w.local_rank, w.global_rank, w.world_size) for w in workers] == [(0, 0, 4), (1, 1, 4), (0, 2, 4), (1, 3, 4)]
    source = pathlib.Path(local_elastic_agent.__file__).read_text()
    assert '"RANK": str(worker.global_rank)' in source and 'worker_env["LOCAL_RANK"] = str(local_rank)' in source
    # --virtual-local-rank: LOCAL_RANK 0 and one visible GPU per process
    assert 'worker_env["LOCAL_RANK"] = "0"' in source and 'worker_env["CUDA_VISIBLE_DEVICES"] = visible_gpu' in source
    assert "--virtual-local-rank" in pathlib.Path(torchrun.__file__).read_text()


def test_a_group_without_a_cpu_backend_refuses_cpu_tensors_and_nccl_has_none():
    from torch.distributed.distributed_c10d import Backend, BackendConfig

    assert Backend.backend_capability["nccl"] == ["cuda"]
    assert BackendConfig(Backend("nccl")).get_device_backend_map() == {"cuda": "nccl"}
    assert BackendConfig(Backend("cpu:gloo,cuda:nccl")).get_device_backend_map() == {"cpu": "gloo", "cuda": "nccl"}
    # A group whose only backend serves CUDA tensors (NCCL cannot start on this CPU build; Gloo stands in for it):
    _in_a_fresh_process("""
        import torch, torch.distributed as dist
        dist.init_process_group("cuda:gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            dist.all_reduce(torch.zeros(2))
        except RuntimeError as exc:
            assert str(exc) == "No backend type associated with device type cpu", exc
        else:
            raise AssertionError("a CPU tensor was reduced by a group without a CPU backend")
    """)


def test_wait_stream_and_synchronize_as_documented():
    wait, sync = torch.cuda.Stream.wait_stream.__doc__, torch.cuda.Stream.synchronize.__doc__
    assert "All future work submitted to this stream will wait until all kernels" in wait
    assert "returns without waiting for currently enqueued" in " ".join(wait.split())
    assert "Wait for all the kernels in this stream to complete." in sync and "cudaStreamSynchronize" in sync


def test_record_stream_as_documented():
    doc = " ".join(torch.Tensor.record_stream.__doc__.split())
    assert "The caching allocator is aware of only the stream where a tensor was allocated." in doc
    assert "if a tensor is used on a stream different from the stream of origin, the allocator might reuse the memory unexpectedly" in doc


def test_cpp_stacktraces_switch():
    import os
    import subprocess
    import sys

    def error(value):
        done = subprocess.run([sys.executable, "-c", "import torch\ntorch.zeros(2) + torch.zeros(3)"], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "TORCH_SHOW_CPP_STACKTRACES": value,
                                                          "TORCH_DISABLE_ADDR2LINE": "1"})  # unsymbolised: faster
        return done.stderr
    without, with_frames = error("0"), error("1")
    assert "The size of tensor a (2) must match" in without and "Exception raised from" not in without
    assert "Exception raised from infer_size_impl" in with_frames and re.search(r"^#\d+ ", with_frames, re.M)

def _one_worker_group(backend):
    """A process group of one worker in this process (a HashStore: no rendezvous over the network)."""
    import torch.distributed as dist
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    return dist


def test_nccl_groups_refuse_cpu_tensors():
    """distributed-workers.md: a group made for NCCL has a backend for CUDA tensors only, and c10d refuses a
    collective on a tensor of a device type without a backend with 'No backend type associated with device type
    cpu'. NCCL itself needs a GPU; the refusal is c10d's, before any backend runs, so a group that maps only cuda
    (to Gloo, which this CPU build has) meets the same words."""
    import torch.distributed as dist
    assert dist.Backend.backend_capability["nccl"] == ["cuda"]
    _one_worker_group("cuda:gloo")
    try:
        with pytest.raises(RuntimeError, match=r"^No backend type associated with device type cpu$"):
            dist.all_reduce(torch.ones(2))
    finally:
        dist.destroy_process_group()
    _one_worker_group("cpu:gloo,cuda:gloo")  # one backend per device type: the CPU tensor goes to its own
    try:
        t = torch.ones(2)
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 1.0]
    finally:
        dist.destroy_process_group()


def test_all_reduce_works_in_place():
    """distributed-workers.md: dist.all_reduce(t) replaces t's values and returns no tensor; reducing a copy
    made by .to() leaves the original as it was."""
    dist = _one_worker_group("gloo")
    try:
        t = torch.tensor([1.0, 2.0])
        assert dist.all_reduce(t, op=dist.ReduceOp.SUM) is None and t.tolist() == [1.0, 2.0]
        t.mul_(3)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        assert t.tolist() == [3.0, 6.0]
        original = torch.tensor([5.0], dtype=torch.float64)
        copy = original.to(torch.float32)           # .to() of another dtype: a new tensor, as .to(device) is
        copy.zero_()
        dist.all_reduce(copy)
        assert original.tolist() == [5.0]
    finally:
        dist.destroy_process_group()


def test_ddp_refuses_device_ids_for_a_cpu_model():
    """distributed-workers.md: DistributedDataParallel with device_ids and a model still on the CPU raises
    ValueError in its constructor, naming the device_ids and the parameters' devices, and moves nothing."""
    from torch.nn.parallel import DistributedDataParallel
    dist = _one_worker_group("gloo")
    try:
        model = torch.nn.Linear(3, 2)
        with pytest.raises(ValueError, match=re.escape(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], output_device "
                "None, and module parameters {device(type='cpu')}.")):
            DistributedDataParallel(model, device_ids=[1])
        assert {p.device.type for p in model.parameters()} == {"cpu"}
    finally:
        dist.destroy_process_group()


def _gpu_scenario(name):
    """distributed-workers.md's claims that need NCCL on a GPU: the scenario of
    tests/simulated/fidelity_distributed.py that shows it (run on the lead's GPU machine)."""
    if not torch.cuda.is_available() or not torch.distributed.is_nccl_available():
        pytest.skip("needs CUDA and NCCL: python -m pytest tests/book/test_claims.py -k distributed on a GPU machine")
    from tests.simulated import fidelity_distributed
    return fidelity_distributed.SCENARIOS[name]()


def test_distributed_two_ranks_on_one_gpu_are_refused_by_nccl():
    said = _gpu_scenario("two ranks on one GPU")
    assert "DistBackendError" in said and re.search(r"Duplicate GPU detected : rank \d and rank \d both on CUDA device", said)


def test_distributed_ddp_without_device_ids_leaves_the_batch():
    said = _gpu_scenario("DDP without device_ids, CPU batch")
    assert "with device_ids: output on cuda:0" in said
    assert "Expected all tensors to be on the same device" in said and "cpu" in said


def test_distributed_producer_exit_is_reported():
    said = _gpu_scenario("producer exits first")
    assert "producer sees [1.0, 2.0, 3.0, 4.0]" in said  # the consumer's in-place change: one memory, not a copy
    assert "Producer process has been terminated before all shared CUDA tensors released" in said

# random-numbers.md, on this machine's CPU-only build (the CUDA side is in the page's record).

def test_a_draw_without_generator_uses_its_devices_default():
    """The CPU's draws without generator= come from torch.default_generator, which is on the CPU."""
    assert torch.default_generator.device == torch.device("cpu")
    torch.default_generator.manual_seed(7)
    first = torch.randn(4)
    torch.default_generator.manual_seed(7)
    assert torch.equal(torch.randn(4), first)


def test_a_generator_is_made_on_the_cpu_unless_told():
    """The CPU side; a device's generator is in the page's record."""
    assert torch.Generator().device == torch.device("cpu")
    assert torch.Generator(device="cpu").device == torch.device("cpu")


def test_a_generator_goes_on_until_it_is_seeded_again():
    g = torch.Generator().manual_seed(3)
    first, second = torch.rand(4, generator=g), torch.rand(4, generator=g)
    assert not torch.equal(first, second)
    g.manual_seed(3)
    assert torch.equal(torch.rand(4, generator=g), first)


def test_manual_seed_seeds_every_accelerator(monkeypatch):
    """torch.manual_seed calls the seeding function of CUDA, MPS, XPU, MTIA and of a registered extension's device,
    each skipped only in a bad fork, then seeds the CPU."""
    import torch.random

    calls = []
    for module, name in ((torch.cuda, "manual_seed_all"), (torch.mps, "manual_seed"), (torch.xpu, "manual_seed_all"),
                         (torch.mtia, "manual_seed_all")):
        monkeypatch.setattr(module, name, lambda seed, m=module.__name__: calls.append((m, seed)))
    monkeypatch.setattr(torch.random, "_seed_custom_device", lambda seed: calls.append(("custom", seed)))
    torch.manual_seed(123)
    assert calls == [("torch.cuda", 123), ("torch.mps", 123), ("torch.xpu", 123), ("torch.mtia", 123),
                     ("custom", 123)]
    assert torch.initial_seed() == 123
    calls.clear()
    monkeypatch.setattr(torch.cuda, "_is_in_bad_fork", lambda: True)
    torch.manual_seed(5)
    assert ("torch.cuda", 5) not in calls and ("torch.mps", 5) in calls


def test_cuda_seeding_leaves_the_cpu_generator_alone():
    torch.manual_seed(11)
    state = torch.get_rng_state()
    torch.cuda.manual_seed_all(99)
    torch.cuda.manual_seed(99)
    assert torch.equal(torch.get_rng_state(), state)


def test_layers_built_on_the_cpu_draw_from_its_generator():
    torch.default_generator.manual_seed(21)
    a = torch.nn.Linear(5, 3)
    torch.default_generator.manual_seed(21)
    b = torch.nn.Embedding(4, 2), torch.nn.Linear(5, 3)
    torch.default_generator.manual_seed(21)
    c = torch.nn.Linear(5, 3)
    assert torch.equal(a.weight, c.weight) and not torch.equal(a.weight, b[1].weight)


def test_a_dataloader_draws_a_base_seed_every_epoch():
    from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset

    data = TensorDataset(torch.arange(8.0))
    for loader in (DataLoader(data, batch_size=3), DataLoader(data, batch_size=3, shuffle=False, num_workers=0),
                   DataLoader(data, sampler=RandomSampler(data, generator=torch.Generator().manual_seed(1)))):
        for _ in range(2):  # every epoch
            state = torch.get_rng_state()
            list(loader)
            assert not torch.equal(torch.get_rng_state(), state)
    own = torch.Generator().manual_seed(4)
    loader = DataLoader(data, batch_size=3, sampler=SequentialSampler(data), generator=own)
    state, own_state = torch.get_rng_state(), own.get_state()
    list(loader)
    assert torch.equal(torch.get_rng_state(), state) and not torch.equal(own.get_state(), own_state)


# meta-device.md, on the CPU: meta and to_empty behave alike for every device.

def _encoder_like():
    model = torch.nn.Module()
    model.embed, model.norm = torch.nn.Embedding(50, 6), torch.nn.LayerNorm(6)
    model.head, model.bn = torch.nn.Linear(6, 3), torch.nn.BatchNorm1d(3)
    model.register_buffer("table", torch.arange(12.0).reshape(2, 6), persistent=False)
    return model


def test_building_on_meta_draws_nothing():
    state = torch.get_rng_state()
    with torch.device("meta"):
        model = _encoder_like()
    assert torch.equal(torch.get_rng_state(), state)
    assert {t.device.type for t in [*model.parameters(), *model.buffers()]} == {"meta"}


def test_a_meta_model_cannot_be_copied_out():
    with torch.device("meta"):
        model = _encoder_like()
    with pytest.raises(NotImplementedError, match=r"Cannot copy out of meta tensor; no data! Please use "
                                                  r"torch\.nn\.Module\.to_empty\(\)"):
        model.to("cpu")


def _with_deterministic_fill():
    class Fill:
        def __enter__(self):
            self.was = torch.are_deterministic_algorithms_enabled()
            torch.use_deterministic_algorithms(True, warn_only=True)

        def __exit__(self, *exc):
            torch.use_deterministic_algorithms(self.was)
    assert torch.utils.deterministic.fill_uninitialized_memory  # on by default
    return Fill()


def test_to_empty_writes_nothing():
    with torch.device("meta"):
        model = _encoder_like()
    shapes = {n: (t.shape, t.dtype) for n, t in [*model.named_parameters(), *model.named_buffers()]}
    with _with_deterministic_fill():
        model.to_empty(device="cpu")
    after = dict([*model.named_parameters(), *model.named_buffers()])
    assert {n: (t.shape, t.dtype) for n, t in after.items()} == shapes
    assert all(t.device.type == "cpu" and t.data_ptr() != 0 for t in after.values())
    floats = [t for t in after.values() if t.is_floating_point()]
    assert floats and all(t.isnan().all() for t in floats)  # the fill below is all there is: nothing wrote
    assert after["bn.num_batches_tracked"].item() == torch.iinfo(torch.int64).max


def test_deterministic_mode_fills_empty_memory_with_nan():
    with _with_deterministic_fill():
        assert torch.empty(5).isnan().all() and torch.empty(2, 2, dtype=torch.float16).isnan().all()
        with torch.device("meta"):
            layer = torch.nn.Linear(3, 2)
        assert layer.to_empty(device="cpu").weight.isnan().all()


def test_reset_parameters_initialises_as_the_constructor():
    with torch.device("meta"):
        model = _encoder_like()
    with _with_deterministic_fill():
        model.to_empty(device="cpu")
    for layer in (model.embed, model.norm, model.head, model.bn):
        layer.reset_parameters()
    assert torch.equal(model.norm.weight, torch.ones(6)) and torch.equal(model.norm.bias, torch.zeros(6))
    assert torch.equal(model.bn.running_mean, torch.zeros(3)) and torch.equal(model.bn.running_var, torch.ones(3))
    assert model.bn.num_batches_tracked.item() == 0
    bound = 1 / 6 ** 0.5
    assert model.head.weight.abs().max() <= bound and model.embed.weight.isfinite().all()
    torch.manual_seed(2)
    fresh = torch.nn.Linear(6, 3)
    torch.manual_seed(2)
    model.head.reset_parameters()
    assert torch.equal(model.head.weight, fresh.weight) and torch.equal(model.head.bias, fresh.bias)


def test_a_computed_buffer_stays_uninitialised():
    with torch.device("meta"):
        model = _encoder_like()
    with _with_deterministic_fill():
        model.to_empty(device="cpu")
    for layer in model.modules():
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    assert model.table.isnan().all()


def test_loading_into_a_meta_model_is_a_no_op():
    import warnings

    state = _encoder_like().state_dict()
    with torch.device("meta"):
        model = _encoder_like()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    assert {t.device.type for t in [*model.parameters(), *model.buffers()]} == {"meta"}
    no_ops = [w for w in caught if "copying from a non-meta parameter in the checkpoint to a meta parameter in the "
              "current model, which is a no-op" in str(w.message)]
    assert len(no_ops) == len(state)


def test_assign_takes_the_checkpoints_tensors():
    state = _encoder_like().state_dict()
    with torch.device("meta"):
        model = _encoder_like()
    model.load_state_dict(state, assign=True)
    for name, p in model.named_parameters():
        assert isinstance(p, torch.nn.Parameter) and p.requires_grad and p.device.type == "cpu"
        assert p.data_ptr() == state[name].data_ptr()  # the checkpoint's tensor itself, not a copy
    assert model.bn.running_mean.data_ptr() == state["bn.running_mean"].data_ptr()


def test_assign_leaves_what_the_checkpoint_lacks_on_meta():
    state = _encoder_like().state_dict()
    assert "table" not in state
    with torch.device("meta"):
        model = _encoder_like()
    model.load_state_dict(state, assign=True)
    assert model.table.device.type == "meta" and model.head.weight.device.type == "cpu"

# mixed-precision.md

def _autocast_devices():
    """The device types this machine can show autocast on: the CPU, and CUDA where it is available."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def test_autocast_lowers_linear_and_keeps_mse_loss_float32():
    import torch.nn.functional as F
    for kind in _autocast_devices():
        for dtype in (torch.float16, torch.bfloat16):
            x, w = torch.randn(8, 4, device=kind), torch.randn(3, 4, device=kind)
            with torch.autocast(kind, dtype=dtype):
                out = F.linear(x, w)
                assert out.dtype == dtype and (x @ w.T).dtype == dtype, (kind, dtype)
                assert F.mse_loss(out, out.detach() + 1).dtype == torch.float32, (kind, dtype)


def test_autocast_keeps_parameters_and_gradients_float32():
    for kind in _autocast_devices():
        model = torch.nn.Linear(4, 3).to(kind)
        with torch.autocast(kind, dtype=torch.bfloat16):
            out = model(torch.randn(5, 4, device=kind))
        out.float().sum().backward()
        assert out.dtype == torch.bfloat16
        assert model.weight.dtype == model.weight.grad.dtype == torch.float32


def test_autocast_default_dtypes():
    assert torch.get_autocast_dtype("cuda") == torch.float16
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16


def test_autocast_changes_only_its_device_type():
    import warnings
    a = torch.randn(4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # without CUDA the region is off as a whole (the next test's claim)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            assert (a @ a).dtype == torch.float32
    m = torch.randn(4, 4, device="meta")  # a device type of every build, beside an enabled CPU region
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (m @ m).dtype == torch.float32 and (a @ a).dtype == torch.bfloat16


@pytest.mark.skipif(torch.cuda.is_available(), reason="shows a machine without CUDA")
def test_autocast_for_cuda_without_cuda_warns_and_is_off():
    with pytest.warns(UserWarning, match=r"^CUDA is not available or torch_xla is imported\. Disabling autocast\.$"):
        with torch.autocast("cuda", dtype=torch.float16):
            assert not torch.is_autocast_enabled("cuda")


def test_half_precision_ranges():
    f16, bf16, f32 = torch.finfo(torch.float16), torch.finfo(torch.bfloat16), torch.finfo(torch.float32)
    assert f16.max == 65504 and f16.smallest_normal == 2.0 ** -14
    assert torch.tensor(2.0 ** -24, dtype=torch.float16).item() == 2.0 ** -24       # the smallest positive value
    assert torch.tensor(2.0 ** -26, dtype=torch.float16).item() == 0.0
    assert bf16.smallest_normal == f32.smallest_normal and 0.99 < bf16.max / f32.max < 1


def _one_step(scaler, grad_value):
    """One scaler.step of SGD on a parameter whose gradient is grad_value; the parameter after it."""
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler.scale((p * 0).sum()).backward()
    p.grad.fill_(grad_value)
    scaler.step(opt)
    scaler.update()
    return p.detach()


def test_grad_scaler_skips_a_non_finite_step_and_halves_its_scale():
    for bad in (float("nan"), float("inf")):
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        assert torch.equal(_one_step(scaler, bad), torch.ones(3)) and scaler.get_scale() == 512.0
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    assert torch.allclose(_one_step(scaler, 1024.0), torch.full((3,), 0.9)) and scaler.get_scale() == 1024.0


def test_a_cuda_grad_scaler_without_cuda_is_disabled():
    loss = torch.ones((), requires_grad=True) * 2
    if not torch.cuda.is_available():
        for make in (lambda: torch.amp.GradScaler("cuda"), lambda: torch.cuda.amp.GradScaler()):
            with pytest.warns(UserWarning, match=r"torch\.cuda\.amp\.GradScaler is enabled, but CUDA is not "
                                                 r"available\.  Disabling\."):
                assert not make().is_enabled()
    disabled = torch.amp.GradScaler("cpu", enabled=False)
    assert disabled.scale(loss) is loss
    assert torch.isnan(_one_step(disabled, float("nan"))).all()


def test_grad_scaler_scale_lives_with_the_first_loss():
    for made_for in ("cpu", "cuda"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = torch.amp.GradScaler(made_for)
        if scaler.is_enabled():
            assert scaler.scale(torch.ones((), device="meta")).device.type == "meta"
            assert scaler._scale.device.type == "meta"
    scaler = torch.amp.GradScaler("cpu")            # update(new_scale) takes a tensor of the scaler's type only
    scaler.scale(torch.ones(()))
    scaler.update(torch.tensor(4.0))
    assert scaler.get_scale() == 4.0
    with pytest.raises(AssertionError, match="new_scale should be"):
        scaler.update(torch.tensor(4.0, device="meta"))


def test_tf32_flags_and_their_defaults():
    before = torch.get_float32_matmul_precision()
    assert before == "highest" and torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is True
    try:
        torch.set_float32_matmul_precision("high")
        assert torch.backends.cuda.matmul.allow_tf32 is True
    finally:
        torch.set_float32_matmul_precision(before)
    assert torch.backends.cuda.matmul.allow_tf32 is False


# compilation.md

def _graphs_after(calls):
    """How many graphs Dynamo compiled while `calls` ran (after a reset)."""
    import torch._dynamo
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    calls()
    return counters["stats"]["unique_graphs"]


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def test_compile_compiles_at_the_first_call():
    from torch._dynamo.utils import counters
    compiled = []
    assert _graphs_after(lambda: compiled.append(torch.compile(_mlp(), backend="eager"))) == 0
    compiled[0](torch.randn(2, 4))
    assert counters["stats"]["unique_graphs"] == 1


def test_a_compiled_model_recompiles_for_another_device_and_keeps_the_first():
    from torch._dynamo.utils import counters

    def calls():
        compiled = torch.compile(_mlp(), backend="eager")
        compiled(torch.randn(2, 4))
        compiled.to("meta")              # a second device every build has
        assert compiled(torch.randn(2, 4, device="meta")).device.type == "meta"
        assert counters["stats"]["unique_graphs"] == 2
        compiled.to_empty(device="cpu")  # back (meta holds no values to copy): the first graph serves it
        compiled(torch.randn(2, 4))
    assert _graphs_after(calls) == 2


def test_the_compiled_wrapper_shares_the_modules_parameters():
    model = _mlp()
    compiled = torch.compile(model, backend="eager")
    assert compiled._orig_mod is model
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    compiled.to("meta")
    assert all(p.device.type == "meta" for p in model.parameters())
    model.to_empty(device="cpu")
    assert all(p.device.type == "cpu" for p in compiled.parameters())


def _explained(fn, *args, **config):
    import torch._dynamo
    torch._dynamo.reset()
    with torch._dynamo.config.patch(**config):
        return torch._dynamo.explain(fn)(*args)


def test_reads_into_python_break_the_graph():
    reads = [lambda x: x * x.sum().item(), lambda x: x * float(x.sum()), lambda x: x * int(x.sum()),
             lambda x: x * x.sum().tolist()]

    def branch(x):
        if x.sum() > 0:
            return x * 2
        return x * 3
    x = torch.randn(5)
    for fn in [*reads, branch]:
        report = _explained(fn, x)
        assert report.graph_break_count == 1 and report.graph_count == 2, fn
    assert _explained(lambda x: x * torch.where(x.sum() > 0, 2, 3), x).graph_break_count == 0


def test_explain_reports_graphs_and_breaks():
    def fn(x):
        peak = x.abs().max().item()
        return x / peak
    report = _explained(fn, torch.randn(3))
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert "Tensor.item()" in report.break_reasons[0].reason
    assert report.break_reasons[0].user_stack[-1].lineno == fn.__code__.co_firstlineno + 1


def test_capture_scalar_outputs_still_breaks_on_an_if():
    def item_only(x):
        return x / x.abs().max().item()

    def item_then_if(x):
        peak = x.abs().max().item()
        if peak == 0:
            return torch.zeros_like(x)
        return x / peak
    x = torch.randn(6)
    assert _explained(item_only, x, capture_scalar_outputs=True).graph_break_count == 0
    assert _explained(item_then_if, x, capture_scalar_outputs=True).graph_break_count == 1


def test_logs_name_graph_breaks_and_recompiles():
    _in_a_fresh_process("""
        import logging, torch, torch._dynamo, torch._logging
        torch._logging.set_logs(graph_breaks=True, recompiles=True)
        seen = []
        class Keep(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        for name in ("torch._dynamo", "torch.__graph_breaks", "torch.__recompiles"):
            logging.getLogger(name).addHandler(Keep())
        f = torch.compile(lambda x: x * x.sum().item(), backend="eager")
        f(torch.randn(3)); f(torch.randn(3, dtype=torch.float64))
        assert any("Graph break" in m for m in seen), seen
        assert any("Recompiling function" in m for m in seen), seen
    """)
    _in_a_fresh_process("""
        import os, torch._logging._internal as logs
        assert {"graph_breaks", "recompiles"} <= set(logs.log_registry.artifact_names)
    """)


def test_a_cpu_scalar_attribute_is_a_cpu_tensor_of_the_graph():
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)
            self.temperature = torch.tensor(0.5)       # a plain attribute: .to() leaves it on the CPU

        def forward(self, x):
            return self.linear(x) / self.temperature
    model = Scaled().to("meta")
    report = _explained(model, torch.randn(3, 4, device="meta"))
    assert report.graph_count == 1 and report.graph_break_count == 0
    devices = {n.meta["example_value"].device.type for g in report.graphs for n in g.graph.nodes
               if n.op in ("placeholder", "get_attr") and isinstance(n.meta.get("example_value"), torch.Tensor)}
    assert devices == {"cpu", "meta"}, devices


def test_inductor_graph_partition_is_on_by_default():
    _in_a_fresh_process("""
        import os, torch
        os.environ.pop("TORCHINDUCTOR_GRAPH_PARTITION", None)
        assert torch.__version__.startswith("2.13")
        import torch._inductor.config as config
        assert config.graph_partition is True
    """)

