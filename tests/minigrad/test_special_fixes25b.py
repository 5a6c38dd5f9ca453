"""Elementwise math that differed from PyTorch 2.13 (found by test_special_fuzz.py), each compared with torch."""
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _both(name, *arrays, requires_grad=False):
    """(minigrad's result, torch's result) of the function `name` ("special.ndtr", "lgamma") on the arrays."""
    def call(lib):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(*[lib.tensor(a, requires_grad=requires_grad) for a in arrays])
    return call(mg), call(torch)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_jy_float64_matches_torch(name):
    # Cephes's approximations, as PyTorch: away from the zeros (where any two methods differ relatively)
    # to 1e-12, and at huge x, where the phase's rounding decides the value.
    x = np.concatenate([np.linspace(0.05, 40.0, 800), [1e-6, 4.9, 5.0, 5.1, 100.5, 1e5 + 0.3, 1e10, 1e20]])
    got, want = _both("special." + name, x)
    got, want = got.numpy(), want.numpy()
    assert got.dtype == want.dtype == np.float64
    away = np.abs(want) > 1e-3
    np.testing.assert_allclose(got[away], want[away], rtol=1e-12, atol=0)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_jy_float32_in_float32(name):
    # PyTorch computes float32 inputs in float32: at x ~ 1e3 its phase x - pi/4 is rounded to float32
    x = np.array([7.25, 13.5, 123.456, 1000.1, 2345.6, 7777.7], dtype=np.float32)
    got, want = _both("special." + name, x)
    got, want = got.numpy(), want.numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_max_ulp(got, want, maxulp=4)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_jy_special_values(name):
    x = np.array([0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 5e-324, 1e-300, -1e-300])
    got, want = _both("special." + name, x)
    got, want = got.numpy(), want.numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))



def _grads(name, x):
    """(minigrad's, torch's) gradient of the sum of `name` (a function of one float64 input) at x."""
    out = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        fn(t).sum().backward()
        out.append(t.grad.numpy())
    return out


def test_ndtr_is_pytorchs_erf_form():
    # (1 + erf(x / sqrt2)) / 2: its left tail rounds (0 below ~-8.3), and so does PyTorch's
    x = np.array([-5.0, -8.0, -8.5, -20.0, -1.5, 0.0, 2.0, 40.0])
    got, want = _both("special.ndtr", x, requires_grad=True)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-15, atol=0)
    assert type(got.grad_fn).__name__ == want.grad_fn.name() == "MulBackward1"
    np.testing.assert_allclose(*_grads("special.ndtr", x), rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ["special.i1", "special.i1e"])
def test_i1_gradient_near_zero_is_one_half(name):
    # within eps of 0 the slope's division by x would round (subnormal x) or overflow: PyTorch's limit 1/2
    x = np.array([5e-324, -2e-310, 1e-17, -2e-16, 0.0, 1e-3, -2.5])
    got, want = _grads(name, x)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", ["i0", "special.i1", "special.modified_bessel_i0"])
def test_i0_i1_are_inf_once_exp_overflows(name):
    x = np.array([709.0, 709.78, 709.79, 710.0, 2.86e307, -710.0, math.inf])
    got, want = _both(name, x)
    got, want = got.numpy(), want.numpy()
    assert np.isinf(want[2:-1]).all() and np.isnan(want[-1])
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_zeta_is_nan_where_pytorchs_series_overflows():
    # every term underflows to 0 and x (x+1) ... (x+22) overflows: PyTorch's Cephes series gives inf * 0
    x = np.array([1e20, 3e13, 1e13, 1e20, 1e20, 40.0])
    q = np.array([3.0, 3.0, 3.0, 1.0, 0.5, 2.0])
    got, want = _both("special.zeta", x, q)
    got, want = got.numpy(), want.numpy()
    assert np.isnan(want[:2]).all()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["lgamma", "special.gammaln"])
def test_lgamma_near_its_zeros_1_and_2(name):
    # Python's math.lgamma loses relative accuracy next to lgamma's zeros; libm (PyTorch) does not
    x = np.array([1 - 1e-12, 1 + 1e-12, 2 - 1e-12, 2 + 1e-10, 0.9999999, 1.1, 1.9, 2.2, 0.76, 2.24, 1.0, 2.0])
    got, want = _both(name, x)
    got, want = got.numpy(), want.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_mvlgamma_near_one():
    x = np.array([1 - 1e-12, 1 + 1e-12, 2 + 1e-11])
    got, want = mg.special.multigammaln(mg.tensor(x), 1), torch.special.multigammaln(torch.tensor(x), 1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13, atol=0)
