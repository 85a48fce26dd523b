"""grader.engine.lazy_dynamo: training runs without importing torch._dynamo, and whatever needs the real module gets it,
once, with the functions disabled before then disabled by it. Each case runs in a fresh Python: the stand-in is
process-wide, and this pytest process may have imported torch._dynamo already."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """
import sys
import torch
from grader.engine import lazy_dynamo
lazy_dynamo.install()
assert lazy_dynamo.stand_in_active()

def train(model, optimizer, steps=3):
    torch.manual_seed(0)
    x, y = torch.randn(8, 2), torch.randn(8, 1)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return model.weight.detach().clone()

def fresh(kind):
    torch.manual_seed(1)
    model = torch.nn.Linear(2, 1)
    return model, kind(model.parameters(), lr=0.1)
"""


def run(body: str) -> str:
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("kind", ["Adam", *(pytest.param(k, marks=pytest.mark.exhaustive) for k in ("SGD", "AdamW", "RMSprop"))])
def test_training_does_not_import_dynamo_and_trains_as_with_it(kind):
    out = run(f"""
        trained = train(*fresh(torch.optim.{kind}))
        print("stand-in", lazy_dynamo.stand_in_active(), "torch._dynamo.utils" in sys.modules)
        torch._dynamo.reset()  # not one of the stand-in's two: the real module is imported
        assert not lazy_dynamo.stand_in_active()
        again = train(*fresh(torch.optim.{kind}))
        print("same", torch.equal(trained, again))
    """)
    assert "stand-in True False" in out and "same True" in out


def test_importing_a_submodule_gives_the_real_package_and_runs_each_module_once():
    out = run("""
        train(*fresh(torch.optim.SGD))
        import torch._dynamo.config as config   # the real package is imported, config with it
        eval_frame = sys.modules["torch._dynamo.eval_frame"]
        print(not lazy_dynamo.stand_in_active(), config is sys.modules["torch._dynamo.config"],
              eval_frame.config is config, torch._dynamo.config is config,
              type(config.__spec__.loader).__name__)
        from torch._dynamo.repro import after_aot  # a submodule the package itself does not import
        print(after_aot is sys.modules["torch._dynamo.repro.after_aot"])
    """)
    assert out.split() == ["True"] * 4 + ["SourceFileLoader", "True"]


def test_compiling_after_training_uses_the_real_disable():
    out = run("""
        model, optimizer = fresh(torch.optim.SGD)
        train(model, optimizer)
        compiled = torch.compile(lambda x: x.sin() + 1, backend="eager")
        print(compiled(torch.zeros(2)).tolist())
        import torch._dynamo
        calls = []
        real_disable = torch._dynamo.disable
        torch._dynamo.disable = lambda fn, *a, **k: calls.append(fn.__name__) or real_disable(fn, *a, **k)
        model2, optimizer2 = fresh(torch.optim.SGD)   # new functions are disabled by the real module
        train(model2, optimizer2, steps=1)
        print(sorted(set(calls)))
    """)
    lines = out.splitlines()
    assert lines[0] == "[1.0, 1.0]"
    assert "zero_grad" in lines[1]  # optimizer.zero_grad, wrapped in torch._disable_dynamo


def test_a_function_disabled_by_the_stand_in_is_disabled_by_the_real_module_once_it_is_imported():
    out = run("""
        ran = []
        def f(x):
            ran.append(x)
            return x + 1
        disabled = torch._dynamo.disable(f)    # the stand-in's: runs f as it is
        print(disabled(1), lazy_dynamo.stand_in_active())
        import torch._dynamo.config
        real = sys.modules["torch._dynamo"]
        seen = []
        real_disable = real.disable
        real.disable = lambda fn, *a, **k: seen.append(fn) or real_disable(fn, *a, **k)
        print(disabled(2), disabled(3), seen == [f], ran)
    """)
    assert out.splitlines() == ["2 True", "3 4 True [1, 2, 3]"]


def test_install_leaves_an_imported_dynamo_alone():
    done = subprocess.run([sys.executable, "-c", "import sys, torch, torch._dynamo\nfrom grader.engine import lazy_dynamo\n"
                           "real = sys.modules['torch._dynamo']\nlazy_dynamo.install()\n"
                           "print(sys.modules['torch._dynamo'] is real, lazy_dynamo.stand_in_active())"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_grading_processes_keep_the_stand_in_through_their_warm_up():
    done = subprocess.run([sys.executable, "-c", "from grader.engine import lazy_dynamo, workers\nworkers._prepare_common()\n"
                           "workers._warm_up()\nprint(lazy_dynamo.stand_in_active())"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True"], done.stderr
