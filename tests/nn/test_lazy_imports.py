"""What `import minigrad` and `import nn` leave for first use (minigrad/_lazy.py): a fresh interpreter's imports
do not load the rarer layers, optimizers and schedules, and each loads and works at its first use, by every
spelling PyTorch's scripts use."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFERRED = ["nn.modules.conv", "nn.modules.rnn", "nn.modules.transformer", "nn.modules.loss", "nn.modules.pooling",
            "nn.modules.batchnorm", "nn.modules.lazy", "nn.optim.lbfgs", "nn.optim.rmsprop", "nn.optim.lr_scheduler",
            "nn.optim.swa_utils", "nn.optim._muon", "nn.serialization", "nn.parallel"]


def run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_a_fresh_import_leaves_the_rarer_modules_unloaded():
    out = run_python("import sys, minigrad, minigrad.nn as nn, minigrad.nn.functional as F\n"
                     "model = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(), nn.Linear(30, 64), nn.Tanh())\n"
                     "minigrad.optim.AdamW(model.parameters())\n"
                     f"print(sorted(m for m in {DEFERRED!r} if m in sys.modules))\n")
    assert out.strip() == "[]", out


def test_deferred_names_load_and_work_on_first_use():
    code = """
import sys
import minigrad, minigrad.nn as nn
from minigrad.nn import LSTM
from nn.optim import RMSprop
import minigrad.optim.lr_scheduler as sched
conv = nn.Conv2d(1, 2, 3)
assert type(conv).__module__ == "nn.modules.conv" and nn.Conv2d is sys.modules["nn.modules.conv"].Conv2d
assert "Conv2d" in vars(nn) and nn.modules.Conv2d is nn.Conv2d  # bound once read: later reads are plain reads
y = conv(minigrad.randn(1, 1, 5, 5))
assert tuple(y.shape) == (1, 2, 3, 3)
out, _ = LSTM(3, 4)(minigrad.randn(2, 1, 3))
opt = RMSprop(conv.parameters(), lr=0.1)
s = sched.StepLR(opt, step_size=1)
y.sum().backward(); opt.step(); s.step()
assert nn.optim.lr_scheduler is sched and minigrad.optim.LBFGS is sys.modules["nn.optim.lbfgs"].LBFGS
assert nn.optim.Muon.__module__ == "nn.optim" and nn.optim.Adafactor.__module__ == "nn.optim"
assert nn.DataParallel is nn.parallel.DataParallel and callable(nn.save)
assert all(hasattr(nn, n) for n in nn.__all__) and all(hasattr(nn.optim, n) for n in nn.optim.__all__)
assert set(nn.__all__) <= set(dir(nn)) and "Conv3d" in dir(nn.modules)
print("ok")
"""
    assert run_python(code).strip() == "ok"


def test_an_unknown_name_is_pytorchs_attribute_error():
    out = run_python("""
import nn, nn.optim, nn.modules
for m in (nn, nn.optim, nn.modules):
    try:
        m.NoSuchLayer
    except AttributeError as e:
        print(e)
print(hasattr(nn, "LazyModuleMixin"))  # (nn.modules' name, not torch.nn's)
""")
    assert out.splitlines() == ["module 'nn' has no attribute 'NoSuchLayer'",
                                "module 'nn.optim' has no attribute 'NoSuchLayer'",
                                "module 'nn.modules' has no attribute 'NoSuchLayer'", "False"]


def test_the_layer_files_and_star_import_as_pytorchs():
    """`minigrad.nn.modules.rnn.LSTM` after `import minigrad` (PyTorch binds each file of torch.nn.modules at
    import: here at its first read), and `from minigrad.nn.modules import *` gives torch.nn.modules' names, the
    deferred layers too."""
    out = run_python("""
import os, types, torch
import minigrad
files = sorted(n for n, v in vars(torch.nn.modules).items() if isinstance(v, types.ModuleType)
               and os.path.exists(os.path.join("nn", "modules", n + ".py")))
print(all(isinstance(getattr(minigrad.nn.modules, n), types.ModuleType) for n in files), len(files) > 10)
print(minigrad.nn.modules.rnn.LSTM is minigrad.nn.LSTM, minigrad.nn.modules.conv.Conv2d is minigrad.nn.Conv2d)
print(set(files) <= set(dir(minigrad.nn.modules)))
mine, theirs = {}, {}
exec("from minigrad.nn.modules import *", mine)
exec("from torch.nn.modules import *", theirs)
mine, theirs = set(mine) - {"__builtins__"}, set(theirs) - {"__builtins__"}
print(sorted(mine - theirs), sorted(theirs - mine), "LSTM" in mine and "Conv2d" in mine)
""")
    assert out.splitlines() == ["True True", "True True", "True", "[] ['LinearCrossEntropyOptions', 'Module'] True"]
