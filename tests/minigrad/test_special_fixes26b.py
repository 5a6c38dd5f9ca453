"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on longer runs, each compared against
PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["igammac", "special.gammaincc", "igamma", "special.gammainc"])
def test_incomplete_gamma_small_a(name):
    # Q at a small a (here exact powers of two, where PyTorch's own series is exact) directly, not as 1 - P
    check(name, [np.array([2.0 ** -20, 2.0 ** -30, 2.0 ** -12, 0.5]), np.array([0.5, 1.0, 0.01, 1.1])], {})


@pytest.mark.parametrize("name", ["modified_bessel_i0", "modified_bessel_i1", "i0e", "i1", "i1e"])
def test_float32_modified_bessel_i(name):
    # PyTorch evaluates Cephes's Chebyshev series in float32 for float32 x: its values, not float64's rounded
    check("special." + name, [np.array([6.0, -6.0, 0.5, 7.5, 9.0, 30.0, 0.0], dtype=np.float32)], {})
