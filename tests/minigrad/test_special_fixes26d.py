"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found in the float32 Bessel functions, each
compared against PyTorch with the fuzzer's own check (float32 to a few ulps: the C library's float32 sin, cos and
log are not numpy's)."""
import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name,x", [
    # PyTorch's Cephes forms in float32 with the compiler's fused multiply-adds: 5 ulps off without them
    ("bessel_y0", [5.0, 3.4308815, 2.7461243, 6.1984935, 8.097468]),
    ("bessel_y1", [5.0, 2.405456, 4.436116, 1.9871881, 5.2487326]),
    ("bessel_j0", [6.34926, 8.237097, 8.336764]),
    ("bessel_j1", [6.1644268, 6.2157054]),
])
def test_float32_bessel_jy(name, x):
    check("special." + name, [np.array(x, dtype=np.float32)], {})


@pytest.mark.parametrize("name,x", [
    # PyTorch's i1 and i1e kernels keep only 17 and 7 of Cephes's coefficients in float32, and take e^x x S
    ("i1", [-7.9704, 7.95, 3.3, -9.5, 12.0]),
    ("i1e", [-7.9944, 7.9, 9.5, -12.0]),
    # K0 and K1 by Cephes's series in float32, x^2 - 2 fused as compiled (K0's log term in double, as there)
    ("modified_bessel_k0", [1.3932, 1.9512, 0.7, 2.5, 9.0]),
    ("modified_bessel_k1", [1.59, 1.7556, 0.3, 3.0]),
    ("scaled_modified_bessel_k0", [1.3932, 1.8384, 0.5, 6.0]),
    ("scaled_modified_bessel_k1", [0.8424, 1.4448, 4.0]),
])
def test_float32_bessel_ik(name, x):
    check("special." + name, [np.array(x, dtype=np.float32)], {})


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                                  "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "i0e", "i1", "i1e"])
def test_float32_bessel_edges(name):
    # the float32 ports keep PyTorch's values at the ends: 0, -0.0, inf, nan, negatives, tiny and huge x
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.5, 1e-30, 1e-42, 8.0, 2.0, 5.0, 88.0, 100.0, 1e4],
                 dtype=np.float32)
    check("special." + name, [x], {})


@pytest.mark.parametrize("name", ["i0e", "i1e"])
def test_scaled_i_huge(name):
    # e^-x I_nu(x) ~ 1/sqrt(2 pi x): not 0 where 2 pi x overflows
    check("special." + name, [np.array([2.86111749e307, -1e308, 1e300])], {})
