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
