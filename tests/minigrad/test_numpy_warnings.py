"""numpy's floating-point warnings from minigrad's own array code are not shown (PyTorch computes the same inf
and nan silently); the user's own numpy code still warns, and a filter of the user's still decides."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import numpy as np
import minigrad as torch
import minigrad.nn.functional as F
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
y = x ** 0.5 + x / 0 + torch.log(x) + x.pow(1.5) + torch.exp(torch.tensor([1000.0])) + 1 / x + x.rsqrt()
y = y + F.lp_pool1d(x.view(1, 1, 3), 1.5, 1).view(3)
y.sum().backward()
print("values", y.isnan().sum().item(), x.grad.isnan().sum().item())
np.array([1.0]) / 0  # the user's own
"""


def run(*flags):
    return subprocess.run([sys.executable, *flags, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True)


def test_minigrads_nan_and_inf_come_without_numpys_warnings():
    out = run()
    assert out.returncode == 0, out.stderr
    nans = [int(n) for n in out.stdout.split()[1:3]]
    assert min(nans) > 0  # the nans are there, as PyTorch's
    warned = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and warned[0].startswith("<string>:10: RuntimeWarning: divide by zero"), out.stderr


def test_a_users_filter_decides_first():
    out = run("-W", "error::RuntimeWarning")
    assert out.returncode != 0 and "FloatingPointError" not in out.stderr and "RuntimeWarning" in out.stderr
