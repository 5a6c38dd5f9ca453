"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on runs of 200-1000 examples, each compared
against PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import math

import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name,args", [
    # i1's and i1e's backward takes 1/2 wherever not |x| > eps: at nan too
    ("special.i1", [np.array([math.nan, 0.5])]),
    ("special.i1e", [np.array([math.nan, -2.0])]),
    # zeta's backward negates a bool `self`, which refuses
    ("special.zeta", [np.array(False), np.array(0.0)]),
    ("special.zeta", [np.array([True, False]), np.array([0.5, 2.0])]),
    # float32 ndtr: 1 + erf cancels, so erf must be as close as PyTorch's (within an ulp)
    ("special.ndtr", [np.array([-2.5, -1.25, -3.0, -2.75], dtype=np.float32)]),
])
def test_found_inputs(name, args):
    check(name, args, {})


@pytest.mark.parametrize("name,x", [
    # n > 6 inside (-1, 1): cos(n acos(x)), not the recurrence (T_7(0) is -4.3e-16 there, not -0)
    ("chebyshev_polynomial_t", np.array([0.0, 0.3, -0.7])),
    ("shifted_chebyshev_polynomial_t", np.array([0.5, 0.2])),
    # float32: the recurrence in float32 (fused as PyTorch's compiled one), not float64 rounded once
    ("shifted_chebyshev_polynomial_v", np.array([0.0, 0.375, 1.0], dtype=np.float32)),
    ("laguerre_polynomial_l", np.array([0, 0, 1])),
    ("laguerre_polynomial_l", np.array([1.0, 2.5, 0.0], dtype=np.float32)),
    ("hermite_polynomial_h", np.array([0.3, -1.7, 2.2], dtype=np.float32)),
    ("legendre_polynomial_p", np.array([0.3, -0.9, 1.0, -1.0], dtype=np.float32)),
])
@pytest.mark.parametrize("n", [5, 7])
def test_polynomials(name, x, n):
    check("special." + name, [x], {"n": n})
