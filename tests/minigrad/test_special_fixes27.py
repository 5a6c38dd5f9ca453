"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on runs of 400 examples (seeds 11-13) and
the last session's leftovers, each compared against PyTorch with the fuzzer's own check."""
import numpy as np
import pytest
from test_special_fuzz import _SUM_CASE, check, known

torch = pytest.importorskip("torch")
f32 = np.float32


@pytest.mark.parametrize("name", ["scaled_modified_bessel_k0", "scaled_modified_bessel_k1"])
def test_scaled_k_huge(name):
    # e^x K_nu(x) ~ sqrt(pi / 2x): not 0.5 h where 2 x overflows inside the quadrature's exponent
    check("special." + name, [np.array([8.988e307, 1.7e308, 1.7976931348623157e308, 1e308, 5e307, 1e300])], {})


@pytest.mark.parametrize("name", ["clamp_tensor", "clamp_min_tensor", "maximum", "atan2", "lerp_tensor"])
def test_float32_sum_into_float64_is_the_known_class(name):
    # the class is any function's, and only where a float64 0-d input's gradient is a float32 sum of 5 or more
    lo = np.array(4.37059416)
    assert known(name, [_SUM_CASE, lo]) and known(name, [_SUM_CASE.astype(np.int64), lo])
    assert not known(name, [_SUM_CASE.astype(np.float64), lo])  # a float64 result: a float64 sum
    assert not known(name, [_SUM_CASE[0], lo])  # three terms: both add left to right
    assert not known(name, [_SUM_CASE, lo.astype(f32)])
    assert not known(name, [_SUM_CASE, np.zeros(4)])  # shapes that do not broadcast (an error, compared as such)


def test_float32_sum_below_five_terms_matches():
    # four terms or fewer: PyTorch's and numpy's orders agree, so these stay in the main test
    x = _SUM_CASE.ravel()
    for n in (3, 4):
        check("clamp_min_tensor", [x[:n], np.array(4.37059416)], {})
        check("maximum", [np.array(-0.5), x[:n]], {})


@pytest.mark.parametrize("args", [
    # bool tensors: PyTorch judges the shapes before the dtype (seed 11)
    [np.zeros((2, 3), dtype=bool), np.array(False), np.array([], dtype=bool)],
    [np.zeros((2, 3), dtype=bool), np.zeros(2, dtype=bool), np.array(True)],
])
def test_clamp_bool_shapes_first(args):
    check("clamp_tensor", args, {})
