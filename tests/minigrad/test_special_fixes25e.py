"""More differences the elementwise-math fuzzer (test_special_fuzz.py) found on longer runs, each compared against
PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name,args", [
    # float32 subnormals: erf(x) ~ (2 / sqrt(pi)) x, not 0 (x P(x^2) underflowed before the division by Q)
    ("erf", [np.array([1e-44, -1.4e-45, 1e-40, 1.1754942e-38], dtype=np.float32)]),
    ("special.erf", [np.array([1e-44, 3e-45, -1e-42], dtype=np.float32)]),
    # shapes that do not broadcast: PyTorch's RuntimeError, not numpy's ValueError
    ("ldexp", [np.array([], dtype=np.float64), np.zeros((0, 3))]),
    ("ldexp", [np.ones(2), np.ones(3)]),
])
def test_found_inputs(name, args):
    check(name, args, {})


@pytest.mark.parametrize("x", [np.array([-0.0]), np.array([[-0.0, -0.0]]), np.array([-0.0, 1.0], dtype=np.float32)])
def test_logcumsumexp_negative_zero(x):  # log(0 + e^-0) is +0 in PyTorch, at the first entry along dim
    check("logcumsumexp", [x], {"dim": -1})
