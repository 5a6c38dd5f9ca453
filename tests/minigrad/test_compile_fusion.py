"""minigrad.compile's fusion (minigrad/compiler/fusion.py): a chain of elementwise steps with no
backward runs as one kernel, giving eager's bits for + - * / and neg, within a few ulps for exp and
tanh (fused only on request); anything a chain's values are needed for outside it stays unfused."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from minigrad.backends.cuda import fused as cuda_fused
from minigrad.compiler import fusion

rng = np.random.default_rng(0)


def _t(*shape, dtype=np.float32):
    return minigrad.tensor(rng.standard_normal(shape).astype(dtype))


def _program(f):
    (program,) = f.cache.values()
    return program


def _fused_steps(f):
    return [s for s in _program(f).steps if isinstance(s, fusion.Fused)]


def _chain(x, v, z):
    with minigrad.no_grad():  # no backward: the chain's values are needed by nothing else
        return -(x * v + z) / (z * z + 1.5) - x  # a (64, 32) with a (32,) row and a 0-d constant


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_arithmetic_chain_is_one_kernel_with_eager_bits(dtype):
    f = minigrad.compile(_chain)
    for _ in range(3):
        x, v, z = _t(64, 32, dtype=dtype), _t(32, dtype=dtype), _t(64, 32, dtype=dtype)
        out = f(x, v, z)
        assert out.array.dtype == dtype
        assert np.array_equal(out.array, _chain(x, v, z).array)
    assert f.stats.replays == 2
    program = _program(f)
    # every op of the expression, in two kernels: z * z reads nothing the first chain made, so it starts
    # the second, which then reads the first's result
    assert program.n_fused == 7
    assert [s.n_ops for s in _fused_steps(f)] == [3, 4]
    assert len(program.runs) == 2  # nothing else runs


def test_division_by_zero_gives_numpys_inf_and_nan():
    def f(x, y):
        with minigrad.no_grad():
            return x / y + x
    c = minigrad.compile(f)
    x, y = minigrad.tensor(np.array([1, 0, -1, 2], np.float32)), minigrad.tensor(np.zeros(4, np.float32))
    with np.errstate(all="ignore"):
        for _ in range(2):
            np.testing.assert_array_equal(c(x, y).array, f(x, y).array)  # (nan equal to nan)
    assert _fused_steps(c)


def test_a_value_read_after_the_chain_is_not_fused_away():
    def f(x, v):
        with minigrad.no_grad():
            y = x * v + 1.0
            return y, y * 2.0 - x  # y is a result: it must exist, so the chain stops at it
    c = minigrad.compile(f)
    for _ in range(3):
        x, v = _t(8, 4), _t(4)
        got, want = c(x, v), f(x, v)
        for g, w in zip(got, want):
            assert np.array_equal(g.array, w.array)
    assert [s.n_ops for s in _fused_steps(c)] == [2, 2]


def test_results_of_fused_kernels_are_not_overwritten_by_the_next_call():
    c = minigrad.compile(_chain)
    x, v, z = _t(8, 4), _t(4), _t(8, 4)
    first = c(x, v, z)
    keep = first.array.copy()
    c(x, v, z)
    second = c(_t(8, 4), _t(4), _t(8, 4))
    assert np.array_equal(first.array, keep) and not np.shares_memory(first.array, second.array)


def test_exp_and_tanh_are_fused_only_on_request_then_within_ulps(monkeypatch):
    def f(x, z):
        with minigrad.no_grad():
            return (x * 0.5).tanh() * z + x.exp()
    exact = minigrad.compile(f)
    x, z = _t(256), _t(256)
    exact(x, z)
    assert np.array_equal(exact(x, z).array, f(x, z).array)  # off: exp and tanh run as numpy's
    assert all("exp" not in s.expr and "tanh" not in s.expr for s in _fused_steps(exact))

    monkeypatch.setattr(fusion, "APPROXIMATE", True)
    approx = minigrad.compile(f)
    approx(x, z)
    for _ in range(2):
        x, z = _t(256), _t(256)
        np.testing.assert_allclose(approx(x, z).array, f(x, z).array, rtol=1e-6, atol=1e-6)
    assert [s.n_ops for s in _fused_steps(approx)] == [3, 2]  # x.exp() reads nothing made: a new chain


def test_integer_chains_and_the_numpy_setting_are_left_unfused():
    def f(x, y):
        with minigrad.no_grad():
            return x * y + x
    ints = minigrad.compile(f)
    a = minigrad.tensor(np.arange(6, dtype=np.int64))
    for _ in range(2):
        assert np.array_equal(ints(a, a).array, f(a, a).array)
    assert not _fused_steps(ints)

    with backends.kernels("numpy"):  # compiled kernels off: every op runs numpy's own code
        plain = minigrad.compile(f)
        x = _t(5)
        for _ in range(2):
            assert np.array_equal(plain(x, x).array, f(x, x).array)
        assert not _fused_steps(plain)


def test_ops_with_a_backward_are_not_fused():
    # a training step: every elementwise op's forward value may be read by its backward
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        h = model(x)
        loss = F.cross_entropy(h * 2.0 + 1.0, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    c = minigrad.compile(step)
    for _ in range(3):
        c(_t(4, 8), minigrad.tensor(rng.integers(0, 4, 4)))
    assert _program(c).n_fused == 0


def test_the_gpu_kernel_source():
    # generated on the CPU; built and run by cupy only where a GPU is (bench/gpu_check.sh)
    assert cuda_fused.kernel_source("(-((x0 * x1) + x2))", 3) == (
        "T x0, T x1, T x2", "T y", "y = (-((x0 * x1) + x2))", "minigrad_chain_3")
    assert not cuda_fused.supports(np.ones(3, np.float32), "(x0 + x0)")  # numpy arrays are the CPU's
