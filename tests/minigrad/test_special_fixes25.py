"""Elementwise math that differed from PyTorch 2.13 (found by test_special_fuzz.py), each compared with torch."""
import numpy as np
import pytest
from test_special_fuzz import check

import minigrad as mg

torch = pytest.importorskip("torch")


def _outcome(L, fn):
    try:
        r = fn(L)
    except Exception as e:  # noqa: BLE001 - both libraries must raise alike
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().numpy().tolist()


# ---- lerp: a 0-d weight of another dtype takes part in promotion; the value from the nearer end ----------
@pytest.mark.parametrize("call", [
    lambda L: L.lerp(L.zeros(2, dtype=L.float64), L.ones(2, dtype=L.float64), L.tensor(0.3, dtype=L.float32)),
    lambda L: L.lerp(L.zeros((), dtype=L.float32), L.ones((), dtype=L.float32), L.tensor(0.3, dtype=L.float64)),
    lambda L: L.lerp(L.zeros(2, dtype=L.int64), L.ones(2, dtype=L.int64), L.tensor(0.3, dtype=L.float64)),
    lambda L: L.lerp(L.zeros(2, dtype=L.float32), L.ones(2, dtype=L.float32), L.tensor(1)),
    lambda L: L.lerp(L.zeros(2, dtype=L.float64), L.ones(2, dtype=L.float64), L.tensor(0.3 + 0j, dtype=L.complex64)),
    lambda L: L.zeros(2, dtype=L.float64).lerp_(L.ones(2, dtype=L.float64), L.tensor(0.3, dtype=L.float32)),
    # still refused as PyTorch refuses: a 1-d weight of another dtype, integer results, an in-place upcast
    lambda L: L.lerp(L.zeros(2, dtype=L.float64), L.ones(2, dtype=L.float64), L.tensor([0.3], dtype=L.float32)),
    lambda L: L.lerp(L.zeros(2, dtype=L.int64), L.ones(2, dtype=L.int64), L.tensor(True)),
    lambda L: L.zeros(2, dtype=L.int64).lerp_(L.ones(2, dtype=L.int64), L.tensor(0.3, dtype=L.float64)),
])
def test_lerp_zero_dim_weight_promotes(call):
    assert _outcome(mg, call) == _outcome(torch, call)


def test_lerp_zero_dim_weight_gradients():
    grads = []
    for L in (mg, torch):
        a = L.zeros(2, dtype=L.float32, requires_grad=True)
        w = L.tensor(0.3, dtype=L.float64, requires_grad=True)
        out = L.lerp(a, L.ones(2, dtype=L.float32), w)
        out.sum().backward()
        grads.append((out.grad_fn.name(), str(a.grad.dtype)[-7:], a.grad.tolist(), str(w.grad.dtype)[-7:], w.grad.item()))
    assert grads[0] == grads[1]


@pytest.mark.parametrize("args", [
    [np.array([1e300, -0.0, 0.0]), np.array([1.0, -0.0, np.inf]), np.array([1.0, 0.5, 0.5])],
    [np.array([1.0, 2.1048853], dtype=np.float32), np.array([1.1125369e-30, 0.0], dtype=np.float32),
     np.array([1.0, 0.75], dtype=np.float32)],
])
def test_lerp_from_the_nearer_end(args):
    check("lerp_tensor", args, {})
    for w in (1.0, 0.5, 0.75):
        check("lerp", args[:2], {"w": w})


# ---- logit: integer and bool inputs in the default float dtype; eps > 1/2 clamps below first ----------
@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "float32", "float64", "complex64"])
@pytest.mark.parametrize("eps", [None, 1e-3, 0.6])
@pytest.mark.parametrize("name", ["logit", "special.logit", "method"])
def test_logit_promotes_integers_and_bool(dtype, eps, name):
    vals = [True, False] if dtype == "bool" else [0, 1, 2, -1, 0.6]

    def call(L):
        x = L.tensor(vals, dtype=getattr(L, dtype))
        return x.logit(eps) if name == "method" else L.special.logit(x, eps) if name == "special.logit" else \
            L.logit(x, eps)

    got, want = _outcome(mg, call), _outcome(torch, call)
    if isinstance(want[-1], list):
        assert got[:2] == want[:2]
        np.testing.assert_allclose(got[2], want[2], rtol=4e-7, equal_nan=True)
    else:
        assert got == want


def test_logit_of_bool_fuzz_input():
    check("special.logit", [np.array([False, True])], {"eps": None})
    check("logit", [np.array([0.1, 0.7, 0.5])], {"eps": 0.6})


# ---- digamma, trigamma, mvlgamma: PyTorch's methods, in its precision -----------------------------
@pytest.mark.parametrize("name,args,kw", [
    ("digamma", [np.array([1.0, -0.0, 0.0, 7.0, 12.5, 0.3, -2.5, -2.00001])], {}),  # trigamma's values, psi(-0.0)
    ("special.psi", [np.array([-0.0, 0.0, -1.0, 1e20])], {}),
    ("polygamma", [np.array([-1.0, -2.00001, 0.3])], {"n": 1}),  # off a pole by sin(pi x)'s rounding: finite
    ("polygamma", [np.array([-1.0, -2.00001, 0.3], dtype=np.float32)], {"n": 1}),  # in float32, as PyTorch
    ("digamma", [np.array([-2.00001, -7.3, 0.5, 10.0], dtype=np.float32)], {}),
    ("mvlgamma", [np.array(-0.0)], {"p": 1}),  # the argument -0.0 + 0.0: digamma(+0) = -inf
    ("mvlgamma", [np.array([0.0, 2.220446e-16], dtype=np.float32)], {"p": 3}),  # x - 1 rounds to the pole
    ("mvlgamma", [np.array([2.55998333e+305])], {"p": 2}),  # lgamma overflows: inf, not OverflowError
])
def test_gamma_family(name, args, kw):
    check(name, args, kw)
