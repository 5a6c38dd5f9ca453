"""Fused ops and rare composites end in PyTorch's node (AddmmBackward0, LogitBackward0, TraceBackward0, ...)
with PyTorch's edges; their values, gradients and second derivatives stay PyTorch's."""
import numpy as np
import pytest

import minigrad
import nn.functional as MF
from minigrad.autograd.gradcheck import gradgradcheck

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _n(*shape):
    return lambda r: r.standard_normal(shape)


def _unit(r):
    return r.uniform(0.05, 0.95, (3, 4))


def _with_specials(r):
    a = r.standard_normal((3, 4))
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
    return a


def _away(r):  # no ties between the operands and no zeros (a tie's gradient is a convention)
    return r.standard_normal((3, 4)) + np.arange(12).reshape(3, 4) * 0.01


def _spd(r):
    a = r.standard_normal((3, 3))
    return a @ a.T + 3 * np.eye(3)


_TARGET = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

# (id, fn(L, F, *tensors) -> output, [input makers], double backward checked)
CASES = [
    ("addmm", lambda L, F, i, a, b: L.addmm(i, a, b, beta=0.5, alpha=2.0), [_n(3, 5), _n(3, 4), _n(4, 5)], True),
    ("addmm_broadcast", lambda L, F, i, a, b: L.addmm(i, a, b), [_n(5), _n(3, 4), _n(4, 5)], True),
    ("addmm_beta0", lambda L, F, i, a, b: L.addmm(i, a, b, beta=0), [_n(3, 5), _n(3, 4), _n(4, 5)], True),
    ("addmv", lambda L, F, i, a, b: L.addmv(i, a, b, alpha=3), [_n(3), _n(3, 4), _n(4)], True),
    ("addbmm", lambda L, F, i, a, b: L.addbmm(i, a, b), [_n(3, 5), _n(2, 3, 4), _n(2, 4, 5)], True),
    ("baddbmm", lambda L, F, i, a, b: L.baddbmm(i, a, b, beta=2), [_n(2, 3, 5), _n(2, 3, 4), _n(2, 4, 5)], True),
    ("addr", lambda L, F, i, a, b: L.addr(i, a, b), [_n(3, 4), _n(3), _n(4)], True),
    ("addcmul", lambda L, F, i, a, b: L.addcmul(i, a, b, value=0.5), [_n(3, 4), _n(3, 4), _n(4)], True),
    ("addcdiv", lambda L, F, i, a, b: L.addcdiv(i, a, b, value=2), [_n(4), _n(3, 4), lambda r: r.uniform(1, 2, (3, 4))],
     True),
    ("nan_to_num", lambda L, F, x: L.nan_to_num(x, posinf=5.0), [_with_specials], True),
    ("logit", lambda L, F, x: L.logit(x), [_unit], True),
    ("logit_eps", lambda L, F, x: L.logit(x, 0.1), [_unit], True),
    ("sinc", lambda L, F, x: L.sinc(x), [_n(3, 4)], True),
    ("deg2rad", lambda L, F, x: L.deg2rad(x), [_n(3, 4)], True),
    ("rad2deg", lambda L, F, x: L.rad2deg(x), [_n(3, 4)], True),
    ("fmax", lambda L, F, a, b: L.fmax(a, b), [_away, _n(4)], True),
    ("fmin", lambda L, F, a, b: L.fmin(a, b), [_away, _n(3, 4)], True),
    ("ldexp_float", lambda L, F, a, b: L.ldexp(a, b), [_n(3, 4), _n(3, 4)], True),
    ("ldexp_int", lambda L, F, a: L.ldexp(a, L.tensor([1, 2, 0, 3])), [_n(3, 4)], True),
    ("rot90", lambda L, F, x: L.rot90(x, 1, (0, 2)), [_n(2, 3, 4)], True),
    ("rot90_k2", lambda L, F, x: L.rot90(x, 2), [_n(3, 4)], True),
    ("rot90_k3", lambda L, F, x: L.rot90(x, -1, (1, 0)), [_n(3, 4)], True),
    ("rot90_k0", lambda L, F, x: L.rot90(x, 4), [_n(3, 4)], True),
    ("std_mean", lambda L, F, x: L.std_mean(x, 1)[0] * 2 + L.std_mean(x, 1)[1], [_n(3, 4)], True),
    ("std_mean_std", lambda L, F, x: L.std_mean(x)[0], [_n(3, 4)], True),
    ("var_mean_mean", lambda L, F, x: L.var_mean(x, 0, keepdim=True)[1], [_n(3, 4)], True),
    ("var_mean", lambda L, F, x: L.var_mean(x, 1, correction=0)[0], [_n(3, 4)], True),
    ("huber_loss", lambda L, F, a, b: F.huber_loss(a, b, delta=0.5), [_n(3, 4), _n(3, 4)], True),
    ("huber_loss_none", lambda L, F, a, b: F.huber_loss(a, b, reduction="none"), [_n(3, 4), _n(3, 4)], True),
    ("huber_loss_target_fixed", lambda L, F, a: F.huber_loss(a, L.tensor(_TARGET), reduction="sum"), [_n(3, 4)], True),
    ("smooth_l1_loss", lambda L, F, a, b: F.smooth_l1_loss(a, b, beta=0.5), [_n(3, 4), _n(3, 4)], True),
    ("smooth_l1_loss_none", lambda L, F, a, b: F.smooth_l1_loss(a, b, reduction="none"), [_n(3, 4), _n(3, 4)], True),
    ("trace", lambda L, F, x: L.trace(x), [_n(3, 4)], True),
    ("take", lambda L, F, x: L.take(x, L.tensor([[0, 5], [11, 5]])), [_n(3, 4)], True),
    ("kthvalue", lambda L, F, x: L.kthvalue(x, 2, 1).values, [_n(3, 4)], True),
    ("mode", lambda L, F, x: L.mode(x, 0).values, [lambda r: np.round(r.standard_normal((5, 3)))], True),
    ("block_diag", lambda L, F, a, b: L.block_diag(a, b), [_n(2, 3), _n(3)], True),
    ("matrix_power_3", lambda L, F, x: L.matrix_power(x, 3), [_n(3, 3)], True),
    ("cholesky", lambda L, F, x: L.cholesky(x), [_spd], False),
    ("pdist", lambda L, F, x: F.pdist(x), [_n(4, 3)], True),
]


def _tensors(L, arrays):
    return [L.tensor(a.copy(), requires_grad=True) for a in arrays]


def _names(t):
    fn = t.grad_fn
    return type(fn).__name__, fn.name(), [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_name_values_and_gradients_match_torch(case):
    _, fn, makers, _ = case
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    mine, theirs = _tensors(minigrad, arrays), _tensors(torch, arrays)
    out, ref = fn(minigrad, MF, *mine), fn(torch, TF, *theirs)
    assert _names(out) == _names(ref)
    assert out.dtype == minigrad.float64 and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-7, atol=1e-9)
    g = rng.standard_normal(tuple(ref.shape))
    gm = minigrad.autograd.grad(out, mine, minigrad.tensor(g), allow_unused=True)
    gt = torch.autograd.grad(ref, theirs, torch.tensor(g), allow_unused=True)
    for a, b in zip(gm, gt):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c[3]], ids=[c[0] for c in CASES if c[3]])
def test_double_backward(case):
    _, fn, makers, _ = case
    rng = np.random.default_rng(1)
    mine = _tensors(minigrad, [m(rng) for m in makers])
    assert gradgradcheck(lambda *ts: fn(minigrad, MF, *ts), mine)


def test_fused_ops_keep_float32():
    x = minigrad.rand(3, 4, requires_grad=True)
    for out in (minigrad.logit(x), minigrad.addcmul(x, x, x), minigrad.nan_to_num(x), minigrad.rot90(x),
                minigrad.std_mean(x)[0], minigrad.fmax(x, x * 0.5), MF.huber_loss(x, x * 0.5)):
        assert out.dtype == minigrad.float32
        out.sum().backward()
        assert x.grad.dtype == minigrad.float32
