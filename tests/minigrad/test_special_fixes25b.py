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
