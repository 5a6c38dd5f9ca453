"""The elementwise-math fuzzer's (test_special_fuzz.py) narrower rules and the incomplete gamma functions at huge a,
each compared against PyTorch with the fuzzer's own check."""
import numpy as np
import pytest
import test_special_fuzz as fuzz
from test_special_fuzz import check, known

torch = pytest.importorskip("torch")
f32 = np.float32
SUM_CASE = np.array([[-3.1275666, 4.517811, -5.2971835], [-1.9665953, -4.196646, -0.5959276]], dtype=f32)


@pytest.mark.parametrize("name,args", [
    # a float64 0-d input's gradient is a float32 sum of six terms, PyTorch's order not numpy's: that gradient is
    # compared at the summation's bound, the values and the rest as before
    ("clamp_min_tensor", [SUM_CASE, np.array(4.37059416)]),
    ("maximum", [np.array(4.37059416), SUM_CASE]),
    ("clamp_tensor", [SUM_CASE, np.array(-2.5), np.array(1.5)]),
    ("lerp_tensor", [SUM_CASE, np.array(0.75), np.array(0.3)]),
])
def test_float32_sum_into_float64_gradient(name, args):
    assert not known(name, args)
    check(name, args, {})


def test_float32_sum_into_float64_values_still_checked(monkeypatch):
    # the values of such a case are compared exactly: one ulp off in minigrad fails
    def off(L, x, lo):
        out = L.clamp(x, min=lo)
        return out if L is torch else out * f32(1 + 2.0 ** -23)

    monkeypatch.setitem(fuzz.F, "clamp_min_tensor", (2, off, None, "int"))
    with pytest.raises(AssertionError, match="output 0"):
        check("clamp_min_tensor", [SUM_CASE, np.array(4.37059416)], {})


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [
    # PyTorch's single-precision kernel is ulps off here: compared with the float64 results rounded instead
    [np.array([3.0, 0.0], dtype=f32), np.array(0.0625, dtype=f32)],
    [np.array([8.216418, 0.5], dtype=f32), np.array([11.72965, 2.0], dtype=f32)],
    [np.array([[0.5], [30.0], [1e-3]], dtype=f32), np.array([1.0, 31.0, 1e-30, 1e4], dtype=f32)],
    [np.array([1, 4, 0]), np.array([0.75, 5.5, 2.0], dtype=f32)],
])
def test_float32_incomplete_gamma_is_the_float64_rounded(name, args):
    check(name, args, {})


def test_float32_incomplete_gamma_checks_torch_float64(monkeypatch):
    # a minigrad result 3 ulps off its own float32 rounding but consistent with its float64 one: PyTorch's float64
    # result rounded catches it
    def off(L, a, x):
        out = L.igamma(a, x)
        return out if L is torch else out * (1 + 3 * 2.0 ** -23)

    monkeypatch.setitem(fuzz.F, "igamma", (2, off, None, "t int"))
    with pytest.raises(AssertionError, match="torch's float64 rounded"):
        check("igamma", [np.array([3.0, 2.5], dtype=f32), np.array(0.75, dtype=f32)], {})


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [
    # integer, bool and float32 inputs beside float64 ones: a float64 result, compared by float64's rule
    [np.array([2, 10]), np.array([2.0, 9.0])],
    [np.array([0.5, 4.5], dtype=f32), np.array([1.0, 5.0])],
    [np.array([True, True]), np.array([2.0, 0.25])],
])
def test_float64_result_of_mixed_dtypes(name, args):
    check(name, args, {})


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
def test_incomplete_gamma_huge_a(name):
    # the prefactor's logarithm from log(1 + t) - t at a huge a (not a log x - lgamma(a), off by ~a 1e-16), and a
    # ~ x by the uniform expansion (the series would need ~sqrt(a) terms): P(1e300, 1e300) = 0.5, not nan
    args = [np.array([2.09597781e16, 1e6, 1e300, 1e20, 1e9]), np.array([2.09597836e16, 1.01e6, 1e300, 1e20, 1e9])]
    assert not known(name, args)
    check(name, args, {})


def _upper_regularized_gamma(mpmath, a, x):
    """Q(a, x) = the integral of t^(a-1) e^-t / Gamma(a) over [x, inf), by mpmath's quadrature at its precision.

    Not mpmath.gammainc: an integral a (both huge a's here are) takes its integer-order path, minutes of CPU at
    a >= 1e15 (its value agrees with this one to ~1e-20 at every point here). With t = x + u the integrand is its
    value at x (its logarithm taken apart, the product's exponent being ~1e18) times exp((a-1) log1p(u/x) - u),
    integrated over pieces one spread wide (sqrt(a), or the decay length 1 / (1 - (a-1)/x) where shorter) from the
    integrand's top (x, or a - 1 above it): the quadrature's tolerance is absolute, so the integrand is kept near 1."""
    mp = mpmath.mp
    a, x = mp.mpf(a), mp.mpf(x)
    top = max(a - 1 - x, 0)
    width = mp.sqrt(a) if x < a else min(mp.sqrt(a), 1 / (1 - (a - 1) / x))
    points = sorted({mp.mpf(0), *(top + k * width for k in range(-12, 60) if top + k * width > 0)}) + [mp.inf]
    rest = mp.quad(lambda u: mp.exp((a - 1) * mp.log1p(u / x) - u), points)
    return mp.exp((a - 1) * mp.log(x) - x - mp.loggamma(a)) * rest


def test_incomplete_gamma_huge_a_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    import minigrad as mg

    mpmath.mp.dps = 40
    a = np.array([2.09597781e16, 1e10, 1e6, 1e8, 5e8, 1e7, 250.0, 25.0, 3e15])
    x = np.array([2.09597836e16, 1.0001e10, 1.01e6, 1e8 + 3e4, 5e8 + 1e4, 1e7 - 5000, 300.0, 20.0, 3e15 + 4e7])
    q = mg.special.gammaincc(mg.tensor(a), mg.tensor(x)).numpy()
    p = mg.special.gammainc(mg.tensor(a), mg.tensor(x)).numpy()
    for k in range(a.size):
        want_q = _upper_regularized_gamma(mpmath, a[k], x[k])
        for got, want in ((q[k], want_q), (p[k], 1 - want_q)):
            assert abs(got - float(want)) <= max(1e-13 * float(want), 1e-323), (a[k], x[k], got, want)


@pytest.mark.parametrize("args", [
    # a float32 0-d weight promoted by float64 input and end: PyTorch's 1 - weight is a float32 difference (seed 11)
    [np.array(0.0), np.array(0.0), np.array(0.06198565, dtype=f32)],
    [np.array([0.5, -2.0, 3.0]), np.array([1.0, 4.0, 0.25]), np.array(0.3, dtype=f32)],
])
def test_lerp_float32_weight_gradient(args):
    check("lerp_tensor", args, {})
