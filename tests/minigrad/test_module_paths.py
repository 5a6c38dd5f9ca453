"""PyTorch's module paths (`minigrad.nn`, `minigrad.optim`, `minigrad.nn.modules.linear`, ...) are the project's
own packages, one module object under two names, under every import spelling, in a fresh process each
(sys.modules is what is tested), and importing minigrad imports no nn."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(code):
    """Run `code` in a fresh interpreter on this tree; its stdout, stripped (a failure shows its stderr)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


NO_DUPLICATES = """
    import sys
    from minigrad import _aliases
    aliases = [n for n in sys.modules if _aliases.real_name(n) is not None]
    assert all(sys.modules[n] is sys.modules[_aliases.real_name(n)] for n in aliases), aliases
    files = {}
    for name, m in list(sys.modules.items()):
        if getattr(m, "__file__", None):
            files.setdefault(m.__file__, set()).add(id(m))
    assert not [f for f, ids in files.items() if len(ids) > 1]
    print(sorted(aliases))
"""


@pytest.mark.parametrize("spelling, check", [
    ("import minigrad.nn as nn", "nn is real"),
    ("from minigrad import nn", "nn is real"),
    ("import minigrad.nn.functional as F", "F is real.functional"),
    ("from minigrad.nn import functional as F", "F is real.functional"),
    ("from minigrad.nn.modules.linear import Linear", "Linear is real.Linear and Linear.__module__ == 'nn.modules.linear'"),
    ("import minigrad.optim as optim", "optim is real.optim"),
    ("from minigrad.optim.lr_scheduler import StepLR", "StepLR is real.optim.lr_scheduler.StepLR"),
    ("from minigrad.optim import AdamW", "AdamW is real.optim.AdamW"),
    ("import minigrad.nn.init as init", "init is real.init"),
    ("from minigrad.nn.utils import clip_grad_norm_, clip_grad_value_", "clip_grad_norm_ is real.utils.clip_grad_norm_"),
    ("from minigrad.nn.parameter import Parameter", "Parameter is real.Parameter"),
    ("from minigrad.nn.modules.module import Module", "Module is real.Module"),
    ("import minigrad\nm = minigrad.nn.Module", "m is real.Module and minigrad.optim is real.optim"),
])
@pytest.mark.parametrize("real_first", [False, True])
def test_each_spelling_gives_the_projects_module(spelling, check, real_first):
    first = "import nn as real\n" if real_first else ""
    out = run(f"{first}{spelling}\nimport minigrad\nimport nn as real\nassert {check}\n{textwrap.dedent(NO_DUPLICATES)}")
    assert out.startswith("[") and "minigrad." in out


def test_aliases_are_the_same_module_objects():
    out = run("""
        import minigrad.nn as a
        import minigrad.nn.functional, minigrad.nn.modules.linear, minigrad.optim.lr_scheduler
        import minigrad, nn
        assert minigrad.nn is nn and minigrad.optim is nn.optim
        assert minigrad.nn.functional is nn.functional and minigrad.nn.modules.linear is nn.modules.linear
        assert minigrad.optim.lr_scheduler is nn.optim.lr_scheduler
        assert sys.modules["minigrad.nn.functional"] is sys.modules["nn.functional"]
        # a module keeps its own name and spec: pickles and reprs say where it lives
        assert nn.functional.__name__ == nn.functional.__spec__.name == "nn.functional"
        assert nn.Linear.__module__ == "nn.modules.linear"
    """.replace("import minigrad, nn", "import minigrad, nn, sys"))
    assert out == ""


def test_importing_minigrad_imports_no_nn():
    out = run("""
        import sys, minigrad
        print(any(n == "nn" or n.startswith("nn.") for n in sys.modules), "minigrad.nn" in sys.modules)
        x = minigrad.ones(2) * 2
        print(any(n == "nn" or n.startswith("nn.") for n in sys.modules))
    """)
    assert out.split() == ["False", "False", "False"]


def test_a_missing_name_under_an_alias_fails_as_a_missing_module():
    out = run("""
        try:
            import minigrad.nn.no_such_thing
        except ModuleNotFoundError as e:
            print(e.name)
        try:
            import minigrad.no_such_thing
        except ModuleNotFoundError as e:
            print(e.name)
    """)
    assert out.split() == ["minigrad.nn.no_such_thing", "minigrad.no_such_thing"]


def test_minigrad_utils_stays_a_package():
    out = run("""
        import minigrad.utils, minigrad.utils.checkpoint
        print(hasattr(minigrad.utils, "__path__"), minigrad.utils.checkpoint.__name__)
    """)
    assert out.split() == ["True", "minigrad.utils.checkpoint"]


def test_a_script_with_only_its_imports_changed(tmp_path):
    script = """
        import minigrad as torch
        import minigrad.nn as nn
        import minigrad.nn.functional as F
        from minigrad.optim.lr_scheduler import StepLR

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = StepLR(opt, step_size=10)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        first = None
        for step in range(20):
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            first = first if first is not None else loss.item()
        print(f"{first:.4f} {loss:.4f}", first > loss.item())
    """
    out = run(script)
    assert out.endswith("True")
