"""minigrad's names bound at first use (minigrad/_lazy.py): `import minigrad` loads no compiler, and
minigrad.compile, torch.save's and torch.conv2d's spellings work at their first read, then as plain attributes."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_compile_loads_at_first_use():
    out = run_python("""
import sys
import minigrad
print("minigrad.compiler" in sys.modules)
f = minigrad.compile(lambda x: x * 2 + 1)
print(f(minigrad.ones(3)).tolist(), f(minigrad.ones(3)).tolist())
from minigrad import compile
print(compile is minigrad.compile is sys.modules["minigrad.compiler"].compile, "compile" in vars(minigrad))
print(minigrad.conv2d is sys.modules["nn.functional"].conv2d, minigrad.save is minigrad.serialization.save)
""")
    assert out.splitlines() == ["False", "[3.0, 3.0, 3.0] [3.0, 3.0, 3.0]", "True True", "True True"]


def test_dir_lists_the_names_bound_on_first_use():
    """dir(minigrad) lists minigrad.compile, .save, .conv2d, ... before their first read (as dir(torch) does, and
    as it listed compile while it was imported eagerly), loading nothing; each name it lists resolves."""
    out = run_python("""
import sys, inspect
import minigrad
names = dir(minigrad)
print(all(n in names for n in ("compile", "save", "conv2d", "nn", "linalg")), "minigrad.compiler" in sys.modules)
print(len(inspect.getmembers(minigrad)) == len(names))
""")
    assert out.splitlines() == ["True False", "True"]
