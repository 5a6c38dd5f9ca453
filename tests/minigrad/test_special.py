"""minigrad.special against torch.special: the namespace, forward values (float64 and float32), gradients
(gradcheck in float64, and PyTorch's at the edge points), the functions without a gradient, and the
fixes that came with it (xlogy's gradient at 0, polygamma's derivative, cumulative_trapezoid,
matrix_power(A, 0))."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad
import minigrad.special as S
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

# torch.special's names minigrad does not provide (see minigrad/special.py), and its module helpers
NOT_PROVIDED = {"airy_ai"}
NOT_FUNCTIONS = {"Tensor", "torch", "common_args", "multi_dim_common"}

RNG = np.random.default_rng(0)
ROOT = Path(__file__).resolve().parents[2]


def _compare(ours, theirs, rtol, atol=0.0):
    ours, theirs = (np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64) for t in (ours, theirs))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def test_the_namespace_has_torch_specials_names():
    names = {n for n in dir(torch.special) if not n.startswith("_")} - NOT_FUNCTIONS
    assert sorted(n for n in names - NOT_PROVIDED if not hasattr(S, n)) == []
    assert sorted(set(S.__all__) - names) == []


def test_special_is_an_attribute_after_import_minigrad():
    code = ("import json, sys, minigrad; assert 'minigrad.special' not in sys.modules; "
            "t = minigrad.special.xlogy(minigrad.tensor([0.0, 2.0]), minigrad.tensor([0.0, 3.0])); "
            "print(json.dumps(t.tolist()))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    np.testing.assert_allclose(json.loads(out.stdout), [0.0, 2.0 * np.log(3.0)], rtol=1e-6)


def test_top_level_and_tensor_names():
    x = minigrad.tensor([0.5, 1.5])
    tx = torch.tensor([0.5, 1.5])
    _compare(minigrad.i0(x), torch.i0(tx), 1e-6)
    _compare(x.i0(), tx.i0(), 1e-6)
    _compare(minigrad.mvlgamma(x + 2, 2), torch.mvlgamma(tx + 2, 2), 1e-6)
    _compare((x + 2).mvlgamma(2), (tx + 2).mvlgamma(2), 1e-6)
    _compare(minigrad.igamma(x, x), torch.igamma(tx, tx), 1e-6)
    _compare(x.igammac(x), tx.igammac(tx), 1e-6)
    y = x.clone()
    y.i0_()
    _compare(y, torch.i0(tx), 1e-6)


# ---- unary, differentiable ----------------------------------------------------------------------------
def _values(lo, hi, n=41, extra=()):
    return np.concatenate([np.linspace(lo, hi, n), np.asarray(extra, dtype=np.float64)])


UNARY = {  # name: (values, rtol in float64)
    "erf": (_values(-6, 6, extra=[0.0, np.inf, -np.inf, np.nan]), 1e-14),
    "erfc": (_values(-6, 27, extra=[0.0, np.inf, -np.inf, np.nan]), 1e-13),
    "erfcx": (_values(-26, 30, extra=[0.0, 1e5, 1e300, np.inf, -np.inf, -30.0, np.nan]), 1e-12),
    "erfinv": (_values(-0.999, 0.999, extra=[-1.0, 1.0, 1.5, 0.0]), 1e-12),
    "exp2": (_values(-10, 10), 1e-14),
    "expm1": (_values(-10, 10, extra=[1e-10]), 1e-14),
    "log1p": (_values(-0.99, 10, extra=[1e-10, -1.0]), 1e-14),
    "expit": (_values(-30, 30), 1e-14),
    "logit": (_values(0.01, 0.99, extra=[0.0, 1.0]), 1e-12),
    "gammaln": (_values(0.05, 40, extra=[-2.5, -0.5, 1.0, 2.0, 0.0, -1.0]), 1e-12),
    "digamma": (_values(0.05, 40, extra=[-2.5, -0.5, 0.0]), 1e-12),
    "psi": (_values(0.05, 40, extra=[-2.5, -0.5]), 1e-12),
    "i0": (_values(-40, 40, extra=[700.0, 705.0, 0.0]), 1e-13),
    "i0e": (_values(-40, 40, extra=[1e4, 1e10, 0.0, np.inf]), 1e-13),
    "i1": (_values(-40, 40, extra=[-700.0, 705.0, 0.0]), 1e-13),
    "i1e": (_values(-40, 40, extra=[1e4, -1e10, 0.0, np.inf]), 1e-13),
    "ndtr": (_values(-8, 8, extra=[0.0, np.inf, -np.inf]), 1e-13),  # (PyTorch's erf form: ~1e-16 absolute)
    "ndtri": (_values(0.001, 0.999, extra=[0.0, 1.0, 0.5, 1e-300, 1e-20, -0.1, 1.1]), 1e-13),
    "log_ndtr": (_values(-40, 10, extra=[-1e5, 0.0, 40.0, np.inf, -np.inf]), 1e-13),
    "entr": (_values(0, 5, extra=[-1.0, np.inf, 1e-300]), 1e-14),
    "sinc": (_values(-5, 5, extra=[0.0, 1e-8]), 1e-13),
    "round": (_values(-5, 5, n=21, extra=[0.5, 1.5, 2.5]), 0.0),
}
# where each is smooth, for gradcheck
SMOOTH = {
    "erf": [-2.0, -0.3, 0.4, 1.5], "erfc": [-2.0, -0.3, 0.4, 3.0], "erfcx": [-3.0, -0.3, 0.2, 1.0, 8.0],
    "erfinv": [-0.9, -0.2, 0.3, 0.8], "exp2": [-1.0, 0.5, 2.0], "expm1": [-1.0, 0.5, 2.0], "log1p": [-0.5, 0.5, 3.0],
    "expit": [-2.0, 0.1, 3.0], "logit": [0.1, 0.5, 0.8], "gammaln": [-2.5, 0.3, 1.7, 6.0],
    "digamma": [-2.5, 0.3, 1.7, 6.0], "psi": [-0.5, 0.3, 4.0], "i0": [-3.0, -0.4, 0.5, 2.0, 30.0],
    "i0e": [-3.0, -0.4, 0.5, 2.0, 30.0], "i1": [-3.0, -0.4, 0.5, 2.0, 30.0], "i1e": [-3.0, -0.4, 0.5, 2.0, 30.0],
    "ndtr": [-3.0, -0.4, 0.5, 2.0], "ndtri": [0.01, 0.3, 0.5, 0.9], "log_ndtr": [-20.0, -3.0, -0.4, 0.5, 2.0],
    "entr": [0.1, 0.5, 2.0], "sinc": [-1.3, 0.2, 0.7],
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_float64(name):
    values, rtol = UNARY[name]
    ours = getattr(S, name)(minigrad.tensor(values))
    theirs = getattr(torch.special, name)(torch.tensor(values))
    assert ours.dtype == minigrad.float64
    _compare(ours, theirs, rtol, atol=2e-16 if name in ("ndtr", "ndtri") else 1e-300)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_float32_and_integers(name):
    values, _ = UNARY[name]
    v32 = values.astype(np.float32)
    ours = getattr(S, name)(minigrad.tensor(v32))
    assert ours.dtype == minigrad.float32
    _compare(ours, getattr(torch.special, name)(torch.tensor(v32)), 2e-5, atol=1e-6)
    if name == "round":  # PyTorch has no integer round
        return
    ints = np.array([0, 1, 2, 3])
    ours = getattr(S, name)(minigrad.tensor(ints))
    theirs = getattr(torch.special, name)(torch.tensor(ints))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    _compare(ours, theirs, 1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_unary_gradcheck(name):
    x = minigrad.tensor(np.array(SMOOTH[name]), requires_grad=True)
    assert gradcheck(getattr(S, name), (x,))


@pytest.mark.parametrize("name", ["erfcx", "ndtri", "log_ndtr", "entr", "i0", "i0e", "i1", "i1e"])
def test_unary_gradgradcheck(name):
    x = minigrad.tensor(np.array(SMOOTH[name]), requires_grad=True)
    assert gradgradcheck(getattr(S, name), (x,))


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_unary_gradient_and_node_name_match_torch(name):
    values = np.array(SMOOTH[name] + {"entr": [0.0, -1.0], "i1": [0.0], "i1e": [0.0], "i0e": [0.0],
                                      "i0": [0.0]}.get(name, []))
    x, tx = minigrad.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    y, ty = getattr(S, name)(x), getattr(torch.special, name)(tx)
    if name not in ("ndtr", "sinc", "logit"):  # composites in one or the other
        assert y.grad_fn.name() == ty.grad_fn.name()
    y.sum().backward()
    ty.sum().backward()
    _compare(x.grad, tx.grad, 1e-9 if name in ("digamma", "psi", "gammaln") else 1e-10, atol=1e-14)


def test_edge_values_as_torch():
    x = minigrad.tensor([-1.0, 0.0, 0.5, np.inf], dtype=minigrad.float64, requires_grad=True)
    S.entr(x).sum().backward()
    _compare(x.grad, [np.nan, np.inf, -(np.log(0.5) + 1.0), -np.inf], 1e-15)
    _compare(S.erfcx(minigrad.tensor([-30.0, -np.inf, np.inf])), [np.inf, np.inf, 0.0], 0.0)
    _compare(S.ndtri(minigrad.tensor([0.0, 1.0, 0.5, -0.1, 1.1, np.nan])), [-np.inf, np.inf, 0.0, np.nan, np.nan, np.nan], 0.0)
    # as PyTorch's: I0 is inf once e^x overflows (past ~709.8, though I0 itself is finite up to ~713), and
    # ndtr's (1 + erf(x/sqrt2)) / 2 rounds to 0 in the far left tail
    big = S.i0(minigrad.tensor([712.0, 720.0], dtype=minigrad.float64)).numpy()
    assert (big == torch.special.i0(torch.tensor([712.0, 720.0], dtype=torch.float64)).numpy()).all()
    assert float(S.ndtr(minigrad.tensor(-10.0, dtype=minigrad.float64))) == 0.0
    assert float(S.log_ndtr(minigrad.tensor(-40.0, dtype=minigrad.float64))) == pytest.approx(-804.6084420137538, rel=1e-14)


# ---- binary: xlogy, xlog1py, zeta, the incomplete gamma functions -------------------------------------
def test_xlogy_and_xlog1py_forward_gradient_at_zero_and_node_names():
    a = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 2.0, -2.0, 0.0, 3.0])
    b = np.array([2.0, 0.0, -1.0, 3.0, np.nan, 0.0, 0.0, -1.0, -0.5])
    for name in ("xlogy", "xlog1py"):
        x, y = minigrad.tensor(a, requires_grad=True), minigrad.tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out, tout = getattr(S, name)(x, y), getattr(torch.special, name)(tx, ty)
        _compare(out, tout, 1e-15)
        assert out.grad_fn.name() == tout.grad_fn.name()
        out.sum().backward()
        tout.sum().backward()
        _compare(x.grad, tx.grad, 1e-15)  # PyTorch: 0 where x == 0 and y <= 0 (xlog1py: y <= -1), else log(y)
        _compare(y.grad, ty.grad, 1e-15)
        t = minigrad.tensor([1.0, 2.0], requires_grad=True)
        tt = torch.tensor([1.0, 2.0], requires_grad=True)
        f, tf = getattr(S, name), getattr(torch.special, name)
        assert f(2.0, t).grad_fn.name() == tf(2.0, tt).grad_fn.name()
        assert f(t, 2.0).grad_fn.name() == tf(tt, 2.0).grad_fn.name()
        _compare(f(2, minigrad.tensor([3])), tf(2, torch.tensor([3])), 1e-6)
        assert f(minigrad.tensor([1, 2]), minigrad.tensor([3, 4])).dtype == minigrad.float32
    a, b = minigrad.tensor([0.0, 0.5, 2.0]), minigrad.tensor([0.0, 3.0, 4.0])  # (one op under two names: each
    assert np.array_equal(minigrad.xlogy(a, b).numpy(), S.xlogy(a, b).numpy())  # its own out= form, as PyTorch's)


def test_xlogy_gradcheck_and_gradgradcheck():
    a = minigrad.tensor(np.array([0.0, 0.5, -1.5, 2.0]), requires_grad=True)
    b = minigrad.tensor(np.array([0.7, 1.5, 2.0, 3.0]), requires_grad=True)
    for f in (S.xlogy, S.xlog1py):
        assert gradcheck(f, (a, b))
        assert gradgradcheck(f, (a, b))


def test_zeta_values_gradient_and_errors():
    s = np.concatenate([RNG.uniform(1.0, 20.0, 200), [2.0, 1.0, 0.5, -1.0, 2.0, 2.0, 3.0, 50.0, np.nan]])
    q = np.concatenate([10 ** RNG.uniform(-5, 3, 200), [1.0, 1.0, 1.0, 1.0, 0.0, -1.5, -2.5, 0.5, 1.0]])
    _compare(S.zeta(minigrad.tensor(s), minigrad.tensor(q)), torch.special.zeta(torch.tensor(s), torch.tensor(q)), 1e-12)
    _compare(S.zeta(2.0, minigrad.tensor([1.0, 2.0])), torch.special.zeta(2.0, torch.tensor([1.0, 2.0])), 1e-6)
    assert float(S.zeta(minigrad.tensor(2.0, dtype=minigrad.float64), 1.0)) == pytest.approx(np.pi ** 2 / 6, rel=1e-15)
    x = minigrad.tensor(np.array([2.0, 3.5]), requires_grad=True)
    q = minigrad.tensor(np.array([0.5, 2.0]), requires_grad=True)
    tq = torch.tensor(np.array([0.5, 2.0]), requires_grad=True)
    out, tout = S.zeta(x.detach(), q), torch.special.zeta(torch.tensor(np.array([2.0, 3.5])), tq)
    assert out.grad_fn.name() == tout.grad_fn.name()
    out.sum().backward()
    tout.sum().backward()
    _compare(q.grad, tq.grad, 1e-12)
    assert gradcheck(lambda t: S.zeta(x.detach(), t), (q,))
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        S.zeta(x, q.detach()).sum().backward()


def test_incomplete_gamma_values_gradient_and_errors():
    a = np.concatenate([10 ** RNG.uniform(-3, 2, 300), [0.0, 1.0, 2.0, -1.0, 1.0, 0.0, np.inf, 2.0, 5.0]])
    x = np.concatenate([10 ** RNG.uniform(-3, 2.3, 300), [1.0, 0.0, np.inf, 1.0, -1.0, 0.0, 1.0, 0.0, np.nan]])
    for name in ("gammainc", "gammaincc"):
        ours = getattr(S, name)(minigrad.tensor(a), minigrad.tensor(x))
        # (PyTorch is good to ~1e-9 relative for a of some tens; the mpmath test below holds ours to 1e-12)
        _compare(ours, getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)), 2e-9, atol=1e-300)
    big_a = np.array([150.0, 400.0, 1000.0])  # PyTorch is good to ~1e-9 here; the mpmath reference is sharper
    _compare(S.gammainc(minigrad.tensor(big_a), minigrad.tensor(big_a * 1.1)),
             torch.special.gammainc(torch.tensor(big_a), torch.tensor(big_a * 1.1)), 1e-8)
    aa = minigrad.tensor(np.array([0.5, 2.0, 7.0]))
    xx = minigrad.tensor(np.array([0.3, 2.5, 4.0]), requires_grad=True)
    txx = torch.tensor(np.array([0.3, 2.5, 4.0]), requires_grad=True)
    for name in ("gammainc", "gammaincc"):
        out = getattr(S, name)(aa, xx)
        tout = getattr(torch.special, name)(torch.tensor(np.array([0.5, 2.0, 7.0])), txx)
        assert out.grad_fn.name() == tout.grad_fn.name()
        g, = minigrad.autograd.grad(out.sum(), xx)
        tg, = torch.autograd.grad(tout.sum(), txx)
        _compare(g, tg, 1e-12)
        assert gradcheck(lambda t, f=getattr(S, name): f(aa, t), (xx,))
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma"):
            getattr(S, name)(aa.clone().requires_grad_(), xx.detach()).sum().backward()
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        S.gammainc(minigrad.tensor([1]), minigrad.tensor([2]))


def test_incomplete_gamma_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a = np.array([0.01, 0.5, 3.0, 30.0, 150.0, 800.0])
    x = np.array([0.02, 2.0, 1.0, 35.0, 120.0, 850.0])
    p = S.gammainc(minigrad.tensor(a), minigrad.tensor(x)).numpy()
    q = S.gammaincc(minigrad.tensor(a), minigrad.tensor(x)).numpy()
    for i in range(a.size):
        ref_p = float(mpmath.gammainc(a[i], 0, x[i], regularized=True))
        ref_q = float(mpmath.gammainc(a[i], x[i], mpmath.inf, regularized=True))
        assert p[i] == pytest.approx(ref_p, rel=1e-12)
        assert q[i] == pytest.approx(ref_q, rel=1e-12)


# ---- polygamma and multigammaln ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 9])
def test_polygamma_values_and_derivative(n):
    v = np.concatenate([np.linspace(-4.75, 12.0, 48), [0.0, 1e-5, 100.0]])
    if n != 1:  # (PyTorch's trigamma is finite, ~1e32, at the negative integers; ours inf, as at 0)
        v = np.concatenate([v, [-1.0, -2.0]])
    _compare(S.polygamma(n, minigrad.tensor(v)), torch.special.polygamma(n, torch.tensor(v)),
             1e-9 if n == 1 else 1e-12)  # (PyTorch's trigamma: ~5e-10)
    x = minigrad.tensor(np.array([-1.5, 0.4, 2.0, 7.5]), requires_grad=True)
    tx = torch.tensor(np.array([-1.5, 0.4, 2.0, 7.5]), requires_grad=True)
    y, ty = S.polygamma(n, x), torch.special.polygamma(n, tx)
    assert y.grad_fn.name() == "PolygammaBackward0"
    g, = minigrad.autograd.grad(y.sum(), x, create_graph=True)
    tg, = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    _compare(g, tg, 1e-9)  # d polygamma(n, x) = polygamma(n + 1, x)
    _compare(g, S.polygamma(n + 1, x), 1e-15)
    assert gradcheck(lambda t: S.polygamma(n, t), (x,))
    assert gradgradcheck(lambda t: S.polygamma(n, t), (x,))


def test_polygamma_checks_and_method():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        S.polygamma(-1, minigrad.tensor([1.0]))
    assert S.polygamma(2, minigrad.tensor([1, 2])).dtype == minigrad.float32
    _compare(minigrad.tensor([1.5]).polygamma(3), torch.tensor([1.5]).polygamma(3), 1e-6)


def test_multigammaln():
    v = np.array([1.6, 2.0, 3.5, 10.0])
    for p in (1, 2, 3, 5):
        x, tx = minigrad.tensor(v + p, requires_grad=True), torch.tensor(v + p, requires_grad=True)
        y, ty = S.multigammaln(x, p), torch.special.multigammaln(tx, p)
        _compare(y, ty, 1e-13)
        assert y.grad_fn.name() == ty.grad_fn.name()
        y.sum().backward()
        ty.sum().backward()
        _compare(x.grad, tx.grad, 1e-12)
        assert gradcheck(lambda t, p=p: S.multigammaln(t, p), (x.detach().requires_grad_(),))
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(minigrad.tensor([3.0]), 0)
    _compare(S.multigammaln(minigrad.tensor([3, 4]), 2), torch.special.multigammaln(torch.tensor([3, 4]), 2), 1e-6)


# ---- without a gradient --------------------------------------------------------------------------------
NO_GRAD = {  # name: (values, rtol, atol)
    # PyTorch's float64 J and Y are good to ~1e-7 absolute only (ours to ~1e-15: the mpmath test below)
    "bessel_j0": (_values(-60, 60, 241, [0.0, 1e-300, 1e-9, 25.0, np.inf]), 0.0, 2e-6),
    "bessel_j1": (_values(-60, 60, 241, [0.0, 1e-300, 1e-9, 25.0, np.inf]), 0.0, 2e-6),
    "bessel_y0": (_values(0.05, 60, 241, [0.0, -1.0, 1e-300, 1e-9, 25.0]), 1e-7, 2e-6),
    "bessel_y1": (_values(0.05, 60, 241, [0.0, -1.0, 1e-300, 1e-9, 25.0]), 1e-7, 2e-6),
    "modified_bessel_i0": (_values(-40, 40, 81, [0.0, 700.0]), 1e-13, 0.0),
    "modified_bessel_i1": (_values(-40, 40, 81, [0.0, -700.0]), 1e-13, 0.0),
    "modified_bessel_k0": (_values(0.01, 50, 201, [0.0, -1.0, 1e-300, 2.0, 800.0]), 1e-13, 0.0),
    "modified_bessel_k1": (_values(0.01, 50, 201, [0.0, -1.0, 1e-300, 2.0, 800.0]), 1e-13, 0.0),
    "scaled_modified_bessel_k0": (_values(0.01, 50, 201, [0.0, -1.0, 1e-300, 2.0, 800.0, 1e6]), 1e-13, 0.0),
    "scaled_modified_bessel_k1": (_values(0.01, 50, 201, [0.0, -1.0, 1e-300, 2.0, 800.0, 1e6]), 1e-13, 0.0),
    "spherical_bessel_j0": (_values(-20, 20, 81, [0.0, 1e-3, 0.49, 0.51, np.inf]), 1e-14, 1e-16),
}


@pytest.mark.parametrize("name", sorted(NO_GRAD))
def test_functions_without_gradient(name):
    values, rtol, atol = NO_GRAD[name]
    x = minigrad.tensor(values, requires_grad=True)
    ours = getattr(S, name)(x)
    assert not ours.requires_grad and ours.grad_fn is None
    _compare(ours, getattr(torch.special, name)(torch.tensor(values)), rtol, atol)
    ours32 = getattr(S, name)(minigrad.tensor(values.astype(np.float32)))
    assert ours32.dtype == minigrad.float32
    assert getattr(S, name)(minigrad.tensor([1, 2])).dtype == minigrad.float32


def test_bessel_j_y_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    xs = np.concatenate([10 ** np.linspace(-10, 3, 60), np.linspace(0.1, 60, 120)])
    for nu in (0, 1):
        for kind, ref_fn in (("j", mpmath.besselj), ("y", mpmath.bessely)):
            ours = getattr(S, f"bessel_{kind}{nu}")(minigrad.tensor(xs)).numpy()
            theirs = getattr(torch.special, f"bessel_{kind}{nu}")(torch.tensor(xs)).numpy()
            ref = np.array([float(ref_fn(nu, mpmath.mpf(float(x)))) for x in xs])
            scale = np.maximum(1.0, np.abs(ref))
            # PyTorch's values, whose asymptotic Q drops the leading 1 of Cephes's denominator (~3e-7 off just above 5)
            assert np.all(np.abs(ours - theirs) <= 1e-15 * scale), (kind, nu)
            assert np.all(np.abs(ours - ref) <= 1e-6 * scale), (kind, nu)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(name):
    f, tf = getattr(S, name), getattr(torch.special, name)
    x = np.array([-1.0, -0.7, -0.2, 0.0, 0.3, 0.5, 0.9, 1.0, 1.7, -2.5])
    n = np.arange(-1, 13)
    xb, nb = np.broadcast_arrays(x[:, None], n[None, :])
    ours = f(minigrad.tensor(xb.copy(), requires_grad=True), minigrad.tensor(nb.copy()))
    assert not ours.requires_grad
    theirs = tf(torch.tensor(xb.copy()), torch.tensor(nb.copy()))
    _compare(ours, theirs, 1e-11, atol=1e-12)
    for k in (0, 3, 2.7):  # a number as n (truncated, as PyTorch)
        _compare(f(minigrad.tensor(x), k), tf(torch.tensor(x), k), 1e-11, atol=1e-12)
    _compare(f(0.5, minigrad.tensor([0, 1, 2, 3])), tf(0.5, torch.tensor([0, 1, 2, 3])), 1e-6)
    assert f(minigrad.tensor(x, dtype=minigrad.float32), 3).dtype == minigrad.float32
    assert f(minigrad.tensor([1, 2]), 2).dtype == minigrad.float32


# ---- the small fixes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"dx": 2.0}, {"x": "1d"}, {"dim": 0}, {"dim": 0, "x": "1d"},
                                    {"dim": 1, "x": "full"}])
def test_cumulative_trapezoid(kwargs):
    y = RNG.standard_normal((3, 4))
    kw = dict(kwargs)
    ours_kw, torch_kw = dict(kw), dict(kw)
    if kw.get("x") == "1d":
        pts = np.cumsum(RNG.uniform(0.1, 1.0, y.shape[kw.get("dim", -1)]))
        ours_kw["x"], torch_kw["x"] = minigrad.tensor(pts), torch.tensor(pts)
    elif kw.get("x") == "full":
        pts = np.cumsum(RNG.uniform(0.1, 1.0, y.shape), axis=1)
        ours_kw["x"], torch_kw["x"] = minigrad.tensor(pts), torch.tensor(pts)
    t, tt = minigrad.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours, theirs = minigrad.cumulative_trapezoid(t, **ours_kw), torch.cumulative_trapezoid(tt, **torch_kw)
    _compare(ours, theirs, 1e-13, atol=1e-15)
    ours.sum().backward()
    theirs.sum().backward()
    _compare(t.grad, tt.grad, 1e-13)
    assert gradcheck(lambda v: minigrad.cumulative_trapezoid(v, **ours_kw), (t.detach().requires_grad_(),))
    if "x" in ours_kw:  # and the one-number trapezoid, which shares the 1-D x handling
        _compare(minigrad.trapezoid(t.detach(), ours_kw["x"], dim=kw.get("dim", -1)),
                 torch.trapezoid(tt.detach(), torch_kw["x"], dim=kw.get("dim", -1)), 1e-13)


def test_cumulative_trapezoid_small_inputs():
    for v in ([1.0], [1.0, 2.0], []):
        _compare(minigrad.cumulative_trapezoid(minigrad.tensor(v)), torch.cumulative_trapezoid(torch.tensor(v)), 1e-15)
    ours = minigrad.cumulative_trapezoid(minigrad.tensor([1, 2, 4]), dx=1)
    theirs = torch.cumulative_trapezoid(torch.tensor([1, 2, 4]), dx=1)
    assert ours.dtype == minigrad.float32
    _compare(ours, theirs, 1e-7)


def _outcome(lib, call):
    try:
        r = call(lib)
    except Exception as e:
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[1], tuple(r.shape), r.numpy().tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.trapezoid(L.zeros(3, 0)),  # an AUC over no points: zeros, not an error
    lambda L: L.trapz(L.zeros(3, 0, dtype=L.int64), dx=0.5),
    lambda L: L.trapezoid(L.zeros(3, 0), L.zeros(2)),
    lambda L: L.trapezoid(L.zeros(0, 2), dim=0),
    lambda L: L.trapezoid(L.arange(12.0).reshape(3, 4), L.arange(5.0)),
    lambda L: L.trapz(L.zeros(3), L.zeros(2)),
    lambda L: L.trapezoid(L.arange(12.0).reshape(3, 4), L.arange(4.0), dim=0),
    lambda L: L.cumulative_trapezoid(L.arange(12.0).reshape(3, 4), L.arange(3.0)),
    lambda L: L.cumulative_trapezoid(L.zeros(3, 0), L.zeros(3)),
    lambda L: L.trapezoid(L.tensor(1.0)),
])
def test_trapezoid_empty_and_mismatched_x_like_torch(call):
    assert _outcome(minigrad, call) == _outcome(torch, call)


def test_matrix_power_zero_keeps_autograd_like_torch():
    a = RNG.standard_normal((2, 3, 3))
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for f, tf in ((minigrad.linalg.matrix_power, torch.linalg.matrix_power), (minigrad.matrix_power, torch.matrix_power)):
        y, ty = f(x, 0), tf(tx, 0)
        _compare(y, ty, 0.0)
        assert y.requires_grad == ty.requires_grad is True
        (y * minigrad.tensor(a)).sum().backward()
        (ty * torch.tensor(a)).sum().backward()
        _compare(x.grad, tx.grad, 0.0)  # zero
    with minigrad.no_grad():
        assert not minigrad.linalg.matrix_power(x, 0).requires_grad
    assert not minigrad.linalg.matrix_power(minigrad.tensor(a), 0).requires_grad


_GRID = np.random.default_rng(7).standard_normal((4, 6))
_XS = np.array([0.0, 0.3, 0.4, 1.0, 1.8, 2.0])


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("kw", [dict(), dict(spacing=0.5), dict(spacing=[2.0, 0.25]), dict(dim=1), dict(dim=[-1, 0], spacing=3.0),
                                dict(spacing=("xs",), dim=1), dict(spacing=("ys", "xs"))])
def test_gradient_values_and_grads_as_torch(kw, edge_order):
    torch = pytest.importorskip("torch")
    coords = {"xs": _XS, "ys": np.array([0.0, 1.0, 1.5, 3.5])}
    results = []
    for lib in (minigrad, torch):
        kw_lib = dict(kw)
        if "spacing" in kw and isinstance(kw["spacing"], tuple):
            kw_lib["spacing"] = tuple(lib.tensor(coords[c]) for c in kw["spacing"])
        y = lib.tensor(_GRID, requires_grad=True)
        outs = lib.gradient(y, edge_order=edge_order, **kw_lib)
        sum((o * (i + 1) * lib.tensor(_GRID)).sum() for i, o in enumerate(outs)).backward()
        results.append(([o.detach().numpy() for o in outs], y.grad.numpy()))
    (ours, ours_grad), (theirs, theirs_grad) = results
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-12, atol=1e-12)


def test_gradient_of_integers_and_bad_arguments_as_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = minigrad.gradient(minigrad.arange(6) ** 2)[0], torch.gradient(torch.arange(6) ** 2)[0]
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    for kw in (dict(edge_order=3), dict(spacing=[1.0, 2.0, 3.0]), dict(dim=0, edge_order=2, spacing=[1.0]),
               dict(dim=1, spacing=[1.0, 2.0])):
        args = (np.arange(8.0).reshape(2, 4),)
        with pytest.raises(RuntimeError) as expected:
            torch.gradient(torch.tensor(*args), **kw)
        with pytest.raises(RuntimeError) as got:
            minigrad.gradient(minigrad.tensor(*args), **kw)
        assert str(got.value) == str(expected.value)
