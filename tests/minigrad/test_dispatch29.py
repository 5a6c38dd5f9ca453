"""The dispatch point's memo (issue 29): `find` decides once per op and array type, under the setting
and numba's state, which registrations to ask; what it finds is what it found before, large work still
reaches its kernel, and a small model's work still leaves numba unloaded."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad
import nn.functional as F
from minigrad import backends
from minigrad.backends.cpu import team

ROOT = Path(__file__).resolve().parents[2]


def needs_numba():
    if not team.available():
        pytest.skip("numba is not installed")


def never(*args):
    raise AssertionError("asked")


def test_without_numba_no_cpu_registration_is_asked(monkeypatch):
    x = np.zeros((4, 8), np.float32)
    backends.find("sigmoid", x)  # (the memo made under numba's real state)
    monkeypatch.setattr(team, "_numba", False)  # as if `import numba` had failed
    from minigrad.backends.cpu import sigmoid

    monkeypatch.setattr(sigmoid, "supports", never)
    assert backends.find("sigmoid", x) is None
    monkeypatch.undo()
    if team.available():
        assert backends.find("sigmoid", x) is sigmoid  # numba's state back: the kernel again


def test_once_numba_has_started_find_does_not_ask_for_it_again(monkeypatch):
    needs_numba()
    from minigrad.backends.cpu import sigmoid

    x = np.zeros((4, 8), np.float32)
    monkeypatch.setattr(team, "available", never)
    assert backends.find("sigmoid", x) is sigmoid


def test_supports_is_asked_at_every_call(monkeypatch):
    # (tests replace a module's supports to steer an op: the memo keeps modules, never their answers)
    needs_numba()
    from minigrad.backends.cpu import sigmoid

    x = np.zeros((4, 8), np.float32)
    assert backends.find("sigmoid", x) is sigmoid
    monkeypatch.setattr(sigmoid, "supports", lambda x: False)
    assert backends.find("sigmoid", x) is None


def test_the_setting_is_followed_after_the_memo_was_made():
    needs_numba()
    from minigrad.backends.cpu import sigmoid

    x = np.zeros((4, 8), np.float32)
    assert backends.find("sigmoid", x) is sigmoid
    with backends.kernels("numpy"):
        assert backends.find("sigmoid", x) is None
        t = minigrad.tensor(x, requires_grad=True)
        assert F.sigmoid(t).grad_fn.name() == "SigmoidBackward0"
    assert backends.find("sigmoid", x) is sigmoid


def test_large_work_still_reaches_its_kernel_and_small_work_runs_numpy():
    needs_numba()
    from minigrad.backends.cpu import linear

    x, w = np.ones((64, 32), np.float32), np.ones((64, 32), np.float32)
    assert backends.find("linear", np.empty((64, 64), np.float32), x, w) is None  # numpy's matmul
    x, w = np.ones((512, 512), np.float32), np.ones((512, 512), np.float32)
    assert backends.find("linear", np.empty((512, 512), np.float32), x, w) is linear
    with backends.kernels("numpy"):
        assert backends.find("linear", np.empty((512, 512), np.float32), x, w) is None


def test_large_linear_runs_the_kernel_with_numpys_values(monkeypatch):
    torch = pytest.importorskip("torch")
    needs_numba()
    from minigrad.backends.cpu import linear

    ran = []
    forward = linear.forward
    monkeypatch.setattr(linear, "forward", lambda *a: ran.append(1) or forward(*a))
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((256, 256), (256, 256), (256,)))
    y = F.linear(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b))
    assert ran
    expected = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(y.array, expected, rtol=1e-5, atol=1e-4)


def test_minigrad_kernels_in_the_environment_still_picks_numpy():
    code = ("import numpy as np, minigrad\n"
            "from minigrad import backends\n"
            "x = np.ones((512, 512), np.float32)\n"
            "print(backends.find('linear', np.empty_like(x), x, x), backends.find('sigmoid', x))\n")
    env = dict(os.environ, MINIGRAD_KERNELS="numpy", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]


def test_a_small_step_leaves_numba_unloaded():
    code = ("import sys, minigrad, nn\n"
            "import nn.functional as F\n"
            "minigrad.backends.CPU_MIN_ELEMENTS = 16384\n"
            "lin = nn.Linear(8, 16)\n"
            "x, t = minigrad.randn(4, 8), minigrad.tensor([0, 1, 2, 3])\n"
            "for _ in range(2):\n"
            "    F.cross_entropy(F.sigmoid(lin(x)), t).backward()\n"
            "print('numba' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_a_float32_dtype_made_anew_is_still_float32():
    # supports() compares numpy's own dtypes by identity first: an equal dtype of another identity
    # (with metadata) must be taken as before, and a byte-swapped float32 still declined
    needs_numba()
    from minigrad.backends.cpu import sigmoid

    own = np.dtype(np.float32, metadata={"from": "a buffer"})
    x = np.linspace(-3, 3, 32, dtype=np.float32).view(own)
    assert x.dtype is not np.dtype(np.float32)
    assert backends.find("sigmoid", x) is sigmoid and backends.find("relu", x) is not None
    assert backends.find("sigmoid", x.astype(">f4")) is None
    assert backends.find("layer_norm", x, x, x, x, None, None, 1e-5) is not None
    y = np.empty(32, np.float64)
    assert backends.find("layer_norm", y, x, x, x, None, None, 1e-5) is None  # dtypes differ
