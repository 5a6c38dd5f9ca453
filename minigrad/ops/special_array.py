"""Special functions on raw arrays (numpy or cupy), the array side of the ops in pointwise.py and
special_ops.py (the public names are minigrad.special's): erf, erfc, erfcx, erfinv, ndtri, log_ndtr,
lgamma, digamma, polygamma, the Hurwitz zeta function and the regularized incomplete gamma functions.
(The Bessel functions are in bessel_array.py.) numpy has none of them and scipy is not a
dependency, so each is a published method written out here.

erf and erfc are accurate to float64 precision, and fast in float32, by two methods:

* float64: W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations
  for the error function", Math. Comp. 23 (1969) 631-637; the SPECFUN routine CALERF),
  max abs error ~2e-16 against math.erf:
      |x| <= 0.46875        erf(x)  = x R1(x^2)
      0.46875 < |x| <= 4    erfc(x) = exp(-x^2) R2(x)
      |x| > 4               erfc(x) = exp(-x^2)/x (1/sqrt(pi) + R3(1/x^2)/x^2)
  Each branch is evaluated only on its own elements (boolean-mask compression).

* float32 (and float16): the single rational minimax approximation used by Eigen and XLA for
  float erf, erf(x) = x P(x^2) / Q(x^2) with x clamped to [-4, 4] (P of degree 6, Q of degree 4),
  ~1e-7 approximation error (max abs error ~3e-7 once rounded in float32). No branches, so it is
  evaluated in cache-sized blocks with preallocated buffers: ~24 cheap passes per block instead of
  over the whole array, which makes it several times faster than whole-array numpy code.

On cupy, `cupyx.scipy.special.erf` (a native kernel) is used when importable.
"""
import functools
import math

import numpy as np

BLOCK = 32768  # elements per block of the float32 path: a few float32 buffers fit in L2

# ---- float64: Cody ----------------------------------------------------------------------------
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03,
      1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
      8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
      2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
      3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
      6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
      2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1  # 1/sqrt(pi)
_THRESH = 0.46875
_BIG = 6.0  # erfc(6) ~ 2e-17: erf is 1 to float64 precision beyond


def _cody_small(x):
    """erf(x) for |x| <= 0.46875: x (sum A_k x^2k) / (sum B_k x^2k)."""
    z = x * x
    num = _A[4] * z
    den = z.copy()
    for i in range(3):
        num += _A[i]
        num *= z
        den += _B[i]
        den *= z
    num += _A[3]
    den += _B[3]
    num *= x
    num /= den
    return num


def _times_exp_neg_sq(xp, y, r):
    """r * exp(-y^2), with y^2 split as (trunc(16y)/16)^2 + rest so its rounding costs no accuracy."""
    hi = xp.trunc(y * 16.0)
    hi *= 0.0625
    lo = (y - hi) * (y + hi)
    hi *= hi
    hi += lo
    hi *= -1.0
    r *= xp.exp(hi, out=hi)
    return r


def _rational(x, p, q, n):
    """(p[n+1] x^(n+1) + p[0] x^n + ... + p[n]) / (x^(n+1) + q[0] x^n + ... + q[n]), by Horner, in place."""
    num = p[n + 1] * x
    den = x.copy()
    for i in range(n):
        num += p[i]
        num *= x
        den += q[i]
        den *= x
    num += p[n]
    den += q[n]
    num /= den
    return num


def _cody_erfc_mid(xp, y):
    """erfc(y) for 0.46875 < y <= 4."""
    return _times_exp_neg_sq(xp, y, _rational(y, _C, _D, 7))


def _cody_erfc_large(xp, y):
    """erfc(y) for y > 4 (y <= _BIG)."""
    z = 1.0 / (y * y)
    num = _rational(z, _P, _Q, 4)
    num *= z
    num *= -1.0
    num += _SQRPI
    num /= y
    return _times_exp_neg_sq(xp, y, num)


def _erf_cody(xp, x, out):
    y = xp.abs(x)
    small = y <= _THRESH
    if bool(small.all()):
        out[...] = _cody_small(x)
        return out
    out[small] = _cody_small(x[small])
    big = ~small
    for sel, erfc in ((big & (y <= 4.0), _cody_erfc_mid), (big & ~(y <= 4.0), _cody_erfc_large)):
        # erf(x) = sign(x) (1 - erfc(|x|)); NaN lands in the second set and stays NaN
        if bool(sel.any()):
            r = erfc(xp, xp.minimum(y[sel], _BIG))
            r *= -1.0
            r += 1.0
            out[sel] = xp.copysign(r, x[sel])
    return out


# ---- float32: rational minimax on [-4, 4] (Eigen / XLA) ----------------------------------------
ERF32_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
ERF32_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
         -1.42647390514189e-02)


# P and Q scaled so that P(0) = 1: x P is then exact for a subnormal x, whose erf (2 / sqrt(pi)) x stays nonzero
_ERF32_P = tuple(a / ERF32_ALPHA[-1] for a in ERF32_ALPHA)
_ERF32_Q = tuple(b / ERF32_ALPHA[-1] for b in ERF32_BETA)


def erf32_block(x, out, x2, q):
    """erf of a float32 block `x` into `out` (may be `x` itself), using scratch buffers x2 and q (same size)."""
    np.clip(x, -4.0, 4.0, out=out)
    np.multiply(out, out, out=x2)
    np.multiply(x2, _ERF32_P[0], out=q)  # q holds P for now; out keeps clamped x
    for a in _ERF32_P[1:-1]:
        q += a
        q *= x2
    q += _ERF32_P[-1]
    out *= q  # x P(x^2)
    np.multiply(x2, _ERF32_Q[0], out=q)
    for b in _ERF32_Q[1:-1]:
        q += b
        q *= x2
    q += _ERF32_Q[-1]
    out /= q  # x P / Q
    return out


def blocks(n, block=None):
    """Slices covering range(n) in blocks of `block` (default BLOCK) elements."""
    block = block or BLOCK
    return [slice(i, min(i + block, n)) for i in range(0, n, block)]


def _erf_f32(x, out):
    flat, res = x.reshape(-1), out.reshape(-1)
    m = min(flat.size, BLOCK)
    x2, q = np.empty(m, x.dtype), np.empty(m, x.dtype)
    for s in blocks(flat.size):
        k = s.stop - s.start
        erf32_block(flat[s], res[s], x2[:k], q[:k])
    return out


def erf(x, out=None):
    """The error function of a float array, elementwise, as a new array (or into `out`, which may be `x`).

    float64: max abs error ~2e-16 (Cody). float32: ~3e-7 (Eigen/XLA rational), and stays float32.
    """
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if x.dtype.itemsize < 4:  # float16: in float32, as PyTorch computes it (the rational's terms overflow float16)
        r = erf(x.astype(np.float32)).astype(x.dtype)
        if out is None:
            return r
        out[...] = r
        return out
    if xp is not np:
        special = _cupy_special()
        if special is not None:
            return special.erf(x) if out is None else special.erf(x, out)
    if out is None:
        out = xp.empty_like(x)
    if x.dtype == np.float64 or xp is not np:
        return _erf_cody(xp, x, out)
    x = np.ascontiguousarray(x)
    if out.flags.c_contiguous:
        return _erf_f32(x, out)
    out[...] = _erf_f32(x, np.empty_like(x))
    return out


def _array_module(x):
    from ..device import array_module

    return array_module(x)


def erfc(x):
    """The complementary error function of a float array, accurate in the tail (Cody's erfc
    branches directly, not 1 - erf); float32 and float16 are computed in float64."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if xp is not np:
        special = _cupy_special()
        if special is not None:
            return special.erfc(x)
    dt = x.dtype
    x = x.astype(np.float64)
    y = xp.abs(x)
    out = xp.empty_like(x)
    small = y <= _THRESH
    out[small] = 1.0 - _cody_small(x[small])
    for sel, fn in ((~small & (y <= 4.0), _cody_erfc_mid), (~small & ~(y <= 4.0), _cody_erfc_large)):
        if bool(sel.any()):
            with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
                r = fn(xp, xp.minimum(y[sel], 30.0))  # erfc(30) underflows to 0 already
            out[sel] = xp.where(x[sel] < 0, 2.0 - r, r)
    return out.astype(dt, copy=False)


_special = False


def _cupy_special():
    global _special
    if _special is False:
        try:
            import cupyx.scipy.special as special
        except Exception:  # pragma: no cover - only on GPU machines without cupyx.scipy
            special = None
        _special = special
    return _special



# ---- erfinv, lgamma, digamma, trigamma (numpy has none of them) ------------------------------------
def erfinv(y):
    """The inverse error function: M. Giles' approximation ("Approximating the erfinv function",
    GPU Computing Gems, 2010), then two Newton steps on erf, to float64 precision; +-inf at +-1."""
    xp = np if isinstance(y, np.ndarray) else _array_module(y)
    dt = y.dtype if y.dtype.kind == "f" else np.dtype(np.float64)
    v = y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -xp.log((1.0 - v) * (1.0 + v))
        small = w < 5.0
        ws, wb = w - 2.5, xp.sqrt(w) - 3.0
        ps = xp.full_like(v, 2.81022636e-08)
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                  0.246640727, 1.50140941):
            ps = c + ps * ws
        pb = xp.full_like(v, -0.000200214257)
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                  1.00167406, 2.83297682):
            pb = c + pb * wb
        x = xp.where(small, ps, pb) * v
        near_one = xp.abs(v) > 0.5
        tail = 1.0 - xp.abs(v)  # (exact above 0.5)
        for _ in range(8):  # Halley on erf(x) = v (erf'' = -2x erf'); near +-1 on erfc(|x|) = 1 - |v|, where
            # erf(x) - v cancels (and the approximation far out needs the cubic steps)
            r = xp.where(near_one, xp.sign(v) * (tail - erfc(xp.abs(x))), erf(x) - v)
            t = r / (TWO_OVER_SQRT_PI_ * xp.exp(-x * x))
            x = x - t / (1.0 + x * t)
        x = xp.where(v == 1.0, np.inf, xp.where(v == -1.0, -np.inf, x))
        x = xp.where(xp.abs(v) > 1.0, np.nan, x)
    return x.astype(dt, copy=False)


TWO_OVER_SQRT_PI_ = 1.1283791670955126


_LGAMMA_SERIES_RADIUS = 0.25
_LGAMMA_SERIES_TERMS = 30  # 0.25^30 ~ 1e-18: the omitted terms are below float64's rounding


@functools.cache
def _lgamma_series():
    """The Taylor coefficients of log Gamma at 1 and at 2 (z^k for k = 1..30, highest power first):
        log Gamma(1 + z) = -gamma z + sum_(k>=2) (-1)^k zeta(k) z^k / k
        log Gamma(2 + z) = (1 - gamma) z + sum_(k>=2) (-1)^k (zeta(k) - 1) z^k / k."""
    k = np.arange(2.0, _LGAMMA_SERIES_TERMS + 1)
    sign = (-1.0) ** k
    at_one = [-0.57721566490153286061] + list(sign * zeta(k, np.ones_like(k)) / k)
    at_two = [1 - 0.57721566490153286061] + list(sign * zeta(k, np.full_like(k, 2.0)) / k)
    return at_one[::-1], at_two[::-1]


def lgamma(x):
    """log|Gamma(x)|, elementwise (inf at the poles): math.lgamma per element, but near its zeros 1 and 2
    (where math.lgamma's relative accuracy is lost, libm's and PyTorch's not) the Taylor series there."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)

    def one(v):
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):  # a pole, or past ~2.5e305
            return math.inf

    flat = np.asarray(x, dtype=np.float64).reshape(-1)
    out = np.fromiter((one(float(v)) if v == v else math.nan for v in flat), dtype=np.float64, count=flat.size)
    for centre, coefficients in zip((1.0, 2.0), _lgamma_series()):
        near = (np.abs(flat - centre) <= _LGAMMA_SERIES_RADIUS) & (flat != centre)  # (+0.0 at 1 and 2)
        if near.any():
            z = flat[near] - centre
            poly = np.zeros_like(z)
            for c in coefficients:
                poly = (poly + c) * z
            out[near] = poly
    return xp.asarray(out.reshape(x.shape).astype(dt))


_PSI_10 = 2.25175258906672110764  # digamma(10)
_PSI_ASYMPTOTIC = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                   -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)  # Cephes psi's series in 1/x^2 (highest power first)


# PyTorch's float32 kernels written out in C (the special functions of Math.h) compute in float32, with the
# compiler's fused multiply-adds and the C library's float32 functions: these two give their roundings.
def fused(a, b, c):
    """a * b + c, for float32 rounded once, as the fma the compiler makes of it (a float32 product is exact
    in float64); for float64 as written."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    return a * b + c


def rounded(fn, x):
    """fn(x) in float64, rounded once to x's dtype: as the C library's float32 functions (within half an ulp or
    so), which numpy's own float32 ones are not."""
    return fn(x.astype(np.float64)).astype(x.dtype, copy=False)


def _in_own_precision(x):
    """(array module, x as float32 or float64): PyTorch computes digamma and trigamma of float32 (and of
    integers, float16) in float32, of float64 in float64."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    return xp, np.asarray(x, dtype=np.float64 if x.dtype == np.float64 else np.float32)


def digamma(x):
    """d/dx log Gamma(x), elementwise, by PyTorch's (Cephes's psi) method and in its precision: for x < 0
    the reflection digamma(1 - x) - pi / tan(pi r), r the fractional part of x; the recurrence
    digamma(x) = digamma(x + 1) - 1/x up to x >= 10, then log x - 1/(2x) - sum_k c_k / x^2k.
    -inf at 0, inf at -0.0, nan at the negative integers."""
    xp, v = _in_own_precision(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        neg = v < 0
        y = np.where(neg, 1 - v, v)
        acc = np.zeros_like(y)
        for _ in range(10):  # (y >= 0 here: ten steps reach 10)
            low = y < 10
            acc = np.where(low, acc - 1 / y, acc)
            y = np.where(low, y + 1, y)
        z = 1 / (y * y)
        poly = np.full_like(y, _PSI_ASYMPTOTIC[0])
        for c in _PSI_ASYMPTOTIC[1:]:
            poly = poly * z + c
        out = acc + np.log(y) - 0.5 / y - np.where(y < 1e17, z * poly, 0)
        out = np.where(y == 10, acc + v.dtype.type(_PSI_10), out)
        r = np.modf(v.astype(np.float64))[0]
        out = np.where(neg, out - (np.pi / np.tan(np.pi * r)).astype(v.dtype), out)
        out = np.where(neg & (v == np.trunc(v)), np.nan, out)
        out = np.where(v == 0, np.copysign(np.inf, -v), out)
    return xp.asarray(out.astype(x.dtype if x.dtype.kind == "f" else np.float32, copy=False))


def trigamma(x):
    """The second derivative of log Gamma, elementwise, by PyTorch's method (its values, to the last bits):
    for x < 1/2 the reflection pi^2 / sin^2(pi x) - trigamma(1 - x); six steps of the recurrence
    trigamma(x) = 1/x^2 + trigamma(x + 1), then the asymptotic series 1/x + 1/(2x^2) + 1/(6x^3) - ...
    (so at a pole, sin(pi x) rounded off 0, it is large but finite, and nan at -inf)."""
    xp, v = _in_own_precision(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        neg = v < 0.5
        sin = np.sin(np.pi * v)
        out = np.where(neg, -(np.pi * np.pi) / (sin * sin), 0).astype(v.dtype)
        y = np.where(neg, 1 - v, v)
        for _ in range(6):
            out += 1 / (y * y)
            y = y + 1
        inv2 = 1 / (y * y)
        out += (1 + 1 / (2 * y) + inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 / 42))) / y
        out = np.where(neg, -out, out)
    return xp.asarray(out.astype(x.dtype if x.dtype.kind == "f" else np.float32, copy=False))


def _float64(x):
    """(array module, result dtype, x as float64): the dtype is x's floating dtype (float32 for integers)."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    return xp, dt, x.astype(np.float64)


# ---- erfcx, log_ndtr, ndtri ---------------------------------------------------------------------
SQRT_HALF = 0.70710678118654752440
SQRT_HALF_PI = 1.2533141373155002512  # sqrt(pi/2)


def _exp_sq(xp, y):
    """exp(y^2), with y^2 split as in _times_exp_neg_sq (no rounding error of y^2 magnified)."""
    hi = xp.trunc(y * 16.0) * 0.0625
    lo = (y - hi) * (y + hi)
    return xp.exp(hi * hi) * xp.exp(lo)


def erfcx(x):
    """exp(x^2) erfc(x), elementwise. For |x| > 0.46875 Cody's erfc branches compute erfc(y) as
    exp(-y^2) R(y): R(y) is erfcx(y), free of the overflow and underflow of the two factors
    (erfcx(y) ~ 1/(sqrt(pi) y) for large y, 0 at inf); below, exp(x^2) (1 - erf(x)); for negative x,
    erfcx(x) = 2 exp(x^2) - erfcx(-x) (inf once exp(x^2) overflows, below x ~ -26.6)."""
    xp, dt, v = _float64(x)
    if dt == np.float32:
        return _erfcx_float32(xp, v.astype(np.float32))
    y = xp.abs(v)
    out = xp.empty_like(v)
    with np.errstate(all="ignore"):
        small = y <= _THRESH
        vs = v[small]
        out[small] = xp.exp(vs * vs) * (1.0 - _cody_small(vs))
        mid = ~small & (y <= 4.0)
        out[mid] = _rational(y[mid], _C, _D, 7)
        big = ~small & ~(y <= 4.0)  # (nan and inf too)
        yb = y[big]
        z = 1.0 / (yb * yb)
        out[big] = (_SQRPI - _rational(z, _P, _Q, 4) * z) / yb
        neg = ~small & (v < 0)
        out[neg] = 2.0 * _exp_sq(xp, y[neg]) - out[neg]
        out[v == -np.inf] = np.inf
    return out.astype(dt, copy=False)


def _erfcx_float32(xp, x):
    """PyTorch's float32 erfcx (Faddeeva's, in float): for |x| <= 50 its fit is taken at y = 400 / (4 + |x|)
    rounded to float32, so at the x' = 400 / y - 4 that y stands for; for x < 0, 2 exp(x^2) - erfcx(-x) with
    x^2, exp and the difference each rounded to float32."""
    with np.errstate(all="ignore"):
        y = xp.abs(x)
        rounded = np.float32(400.0) / (np.float32(4.0) + y)
        at = xp.where(y > 50.0, y, 400.0 / rounded.astype(np.float64) - 4.0)
        r = erfcx(at).astype(np.float32)
        return xp.where(x < 0, (2.0 * xp.exp((x * x).astype(np.float64))).astype(np.float32) - r, r)


def log_ndtr(x):
    """log of the standard normal CDF, elementwise, in x's precision as PyTorch's: with t = x/sqrt2, for x < -1
    log(erfcx(-t) / 2) - t^2 (no underflow of the CDF), above log1p(-erfc(t) / 2) (accurate as the CDF nears 1)."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    v = x if x.dtype.kind == "f" else x.astype(np.float32)
    with np.errstate(all="ignore"):
        t = v * v.dtype.type(SQRT_HALF)
        low = xp.log(0.5 * erfcx(-t)) - t * t
        high = xp.log1p(-0.5 * erfc(t))
        return xp.where(v < -1.0, low, high)


def ndtri(p):
    """The inverse of the standard normal CDF, elementwise: -inf at 0, inf at 1, nan outside [0, 1].

    For p <= 1/2 the rational guess of Abramowitz & Stegun 26.2.23 (error < 4.5e-4), then four
    Newton steps on log ndtr(x) = log p, written with erfcx so that nothing underflows down to the
    smallest subnormal p: log ndtr(x) = log(erfcx(-x/sqrt2) / 2) - x^2/2, and the step's
    ndtr(x) / ndtr'(x) = sqrt(pi/2) erfcx(-x/sqrt2). For p > 1/2, -ndtri(1 - p) (1 - p is exact there)."""
    xp, dt, v = _float64(p)
    with np.errstate(all="ignore"):
        upper = v > 0.5
        q = xp.where(upper, 1.0 - v, v)
        log_q = xp.log(q)
        t = xp.sqrt(-2.0 * log_q)
        x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
        for _ in range(4):
            m = erfcx(-x * SQRT_HALF)
            x = x - (xp.log(0.5 * m) - 0.5 * x * x - log_q) * (SQRT_HALF_PI * m)
        x = xp.where(upper, -x, x)
        x = xp.where(v == 0.0, -np.inf, xp.where(v == 1.0, np.inf, xp.where(v == 0.5, 0.0, x)))
        x = xp.where((v < 0.0) | (v > 1.0) | xp.isnan(v), np.nan, x)
    return x.astype(dt, copy=False)


# ---- the Hurwitz zeta function and polygamma ----------------------------------------------------
@functools.cache
def _bernoulli_over_factorial(m):
    """B_2j / (2j)! for j = 1..m, from the Bernoulli numbers' recurrence in exact fractions (made at the
    first zeta: fractions, decimal and the sums were ~2 ms of every `import minigrad`)."""
    from fractions import Fraction

    b = [Fraction(1)]
    for n in range(1, 2 * m + 1):
        b.append(-sum(math.comb(n + 1, k) * b[k] for k in range(n)) / (n + 1))
    return tuple(float(b[2 * j] / math.factorial(2 * j)) for j in range(1, m + 1))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (q + k)^-x, elementwise (x and q broadcast), in float64.

    Euler-Maclaurin summation: the first n terms directly, with n making a = q + n >= max(12, x), then
        a^(1-x) / (x-1) + a^-x / 2 + sum_j B_2j / (2j)! x (x+1) ... (x+2j-2) a^(-x-2j+1),  j = 1..12,
    whose first omitted term is below 1e-17 of the sum. As PyTorch's (Cephes's) zeta: inf at x == 1
    and at q = 0, -1, -2, ...; nan for x < 1, and for q < 0 with x not an integer."""
    xp = np if isinstance(x, np.ndarray) else _array_module(x)
    s, q = xp.broadcast_arrays(x.astype(np.float64), q.astype(np.float64))
    shape = s.shape
    s, q = s.reshape(-1), q.reshape(-1)
    with np.errstate(all="ignore"):
        n = xp.ceil(xp.maximum(xp.maximum(12.0, s) - q, 0.0))
        n = xp.where(xp.isfinite(n) & (s > 1.0) & ~((q <= 0) & (q == xp.floor(q))), n, 0.0)
        # past 64 terms beyond the last negative q + k, (q + k)^-x has fallen below e^-64 of the sum
        # for x >= q + n: the terms end there and the tail is dropped (else a large x sums ~x terms)
        cut = n > xp.maximum(-q, 0.0) + 64.0
        n = xp.where(cut, xp.ceil(xp.maximum(-q, 0.0)) + 64.0, n)
        total = xp.zeros_like(s)
        idx = xp.nonzero(n > 0)[0]
        k = 0
        while idx.size:  # the direct terms, each element for its own n (only the unfinished ones each round)
            total[idx] += (q[idx] + k) ** -s[idx]
            k += 1
            idx = idx[n[idx] > k]
        a = q + n
        inv = 1.0 / a
        power = a ** -s
        tail = a * power / (s - 1.0) + 0.5 * power
        term = s * power * inv  # x a^(-x-1)
        for j, c in enumerate(_bernoulli_over_factorial(12)):
            tail += c * term
            term = term * ((s + (2 * j + 1)) * (s + (2 * j + 2))) * inv * inv
        total += xp.where(cut, 0.0, tail)
        # PyTorch's (Cephes's) zeta is nan where every term underflows to 0 and the Bernoulli terms' factor
        # x (x+1) ... (x+22) overflows (inf * 0 in its series)
        zero = xp.nonzero(total == 0)[0]
        factor = xp.ones(zero.size)
        for k in range(23):
            factor = factor * (s[zero] + k)
        total[zero[xp.isinf(factor)]] = np.nan
        pole = (q <= 0) & (q == xp.floor(q))
        total = xp.where(pole, np.inf, xp.where((q < 0) & (s != xp.floor(s)), np.nan, total))
        total = xp.where(s == 1.0, np.inf, xp.where(s < 1.0, np.nan, total))
        # at x = inf Cephes's series ends at its first term q^-inf: 1 at q = 1, inf below (where some q + k
        # lies in (-1, 1)), 0 above (then nan, as for any x where every term underflows)
        total = xp.where(s == np.inf, xp.where(q == 1.0, 1.0, xp.where(q < 1.0, np.inf, np.nan)), total)
    return total.reshape(shape)


def polygamma(n, x):
    """The n-th derivative of digamma, elementwise: digamma and trigamma for n = 0, 1, else
    (-1)^(n+1) n! zeta(n + 1, x) (as PyTorch's: +-inf at the poles 0, -1, -2, ...)."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    xp, dt, v = _float64(x)
    with np.errstate(all="ignore"):
        factorial = math.exp(math.lgamma(n + 1.0)) if n <= 170 else math.inf  # (n! overflows past 170)
        out = zeta(xp.full_like(v, n + 1.0), v) * ((-1.0) ** (n + 1) * factorial)
    return out.astype(dt, copy=False)


# ---- the regularized incomplete gamma functions -------------------------------------------------
_GAMMAINC_MAX_ITERATIONS = 100000


def gammainc(a, x, upper=False):
    """P(a, x) = gamma(a, x) / Gamma(a), or (upper) Q(a, x) = 1 - P(a, x), elementwise (broadcast), in float64.

    With the prefactor f = x^a e^-x / Gamma(a) (taken through its logarithm): for small a and x <= 1.1
    (PyTorch's bounds: a <= -0.4 / log x up to x = 0.5, a <= 1.1 x above) Q directly by the series
    Q = 1 - x^a / Gamma(1 + a) - x^a / Gamma(a) sum_(n>=1) (-x)^n / (n! (a + n)), with log Gamma(1 + a)
    from its Taylor series in a (1 + a would round away a tiny a); elsewhere, where x < a + 1 the
    series P = f sum_k x^k / (a (a+1) ... (a+k)), else Q by the continued fraction
    f / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) (modified Lentz), each until
    its terms are below float64 precision; the other one is 1 minus it. The one computed directly
    keeps its relative accuracy however small; for large a the prefactor's logarithm costs about
    a * 1e-16 relative. As PyTorch's: nan for a < 0 or x < 0 and at a = x = 0; P = 1 at a = 0 and at
    x = inf, P = 0 at x = 0 and at a = inf."""
    xp = np if isinstance(a, np.ndarray) else _array_module(a)
    a, x = xp.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    shape = a.shape
    a, x = a.reshape(-1), x.reshape(-1)
    eps = np.finfo(np.float64).eps
    p = xp.full_like(a, np.nan)
    with np.errstate(all="ignore"):
        regular = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
        small = regular & (x <= 1.1) & (a <= xp.where(x <= 0.5, -0.4 / xp.log(xp.minimum(x, 0.5)), 1.1 * x))
        q_direct = xp.nonzero(small)[0]
        with_a_huge = regular & (a >= _UNIFORM_MIN_A) & (xp.abs(x - a) < _UNIFORM_MAX_T * a)
        uniform = xp.nonzero(with_a_huge)[0]
        series = xp.nonzero(regular & ~small & ~with_a_huge & (x < a + 1.0))[0]
        fraction = xp.nonzero(regular & ~small & ~with_a_huge & ~(x < a + 1.0))[0]
        q_uniform = _gammaincc_uniform(xp, a[uniform], x[uniform]) if uniform.size else (None, None)
        q_series = _gammaincc_small_a(xp, a[q_direct], x[q_direct])
        # the series for P
        aa, xx = a[series], x[series]
        term = 1.0 / aa
        total = term.copy()
        live = xp.arange(series.size)
        for k in range(1, _GAMMAINC_MAX_ITERATIONS):
            if not live.size:
                break
            term[live] *= xx[live] / (aa[live] + k)
            total[live] += term[live]
            live = live[xp.abs(term[live]) > eps * xp.abs(total[live])]
        p_series = total * xp.exp(_log_prefactor(xp, aa, xx))
        # the continued fraction for Q
        aa, xx = a[fraction], x[fraction]
        tiny = 1e-300
        b = xx + 1.0 - aa
        c = xp.full_like(aa, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        live = xp.arange(fraction.size)
        for i in range(1, _GAMMAINC_MAX_ITERATIONS):
            if not live.size:
                break
            an = -i * (i - aa[live])
            b[live] += 2.0
            dl = an * d[live] + b[live]
            dl = xp.where(xp.abs(dl) < tiny, tiny, dl)
            cl = b[live] + an / c[live]
            cl = xp.where(xp.abs(cl) < tiny, tiny, cl)
            dl = 1.0 / dl
            delta = dl * cl
            d[live], c[live] = dl, cl
            h[live] *= delta
            live = live[xp.abs(delta - 1.0) > eps]
        q_fraction = h * xp.exp(_log_prefactor(xp, aa, xx))
        if upper:
            p[series], p[fraction], p[q_direct] = 1.0 - p_series, q_fraction, q_series
            if uniform.size:
                p[uniform] = q_uniform[0]
        else:
            p[series], p[fraction], p[q_direct] = p_series, 1.0 - q_fraction, 1.0 - q_series
            if uniform.size:
                p[uniform] = q_uniform[1]
        one, zero = (0.0, 1.0) if upper else (1.0, 0.0)  # the values of P = 1 and P = 0
        # the edges in PyTorch's order, the first that holds: a nan operand meets them too (P(nan, 0) = 0)
        p = xp.select([(a < 0) | (x < 0), a == 0, x == 0, a == np.inf, x == np.inf],
                      [np.nan, xp.where(x > 0, one, np.nan), zero, xp.where(x == np.inf, np.nan, zero), one], p)
    return p.reshape(shape)


_UNIFORM_MIN_A, _UNIFORM_MAX_T = 1e7, 1e-3  # (a huge, x within 0.1% of it: the series would need ~sqrt(a) terms)


def _log1pmx(xp, t):
    """log(1 + t) - t for |t| <= 0.4 without cancellation: with s = t / (2 + t), log(1 + t) = 2 atanh(s) and
    t = 2s / (1 - s), so it is -2s^2 / (1 - s) + 2s^3 (1/3 + s^2/5 + s^4/7 + ...); |s| <= 1/4 here."""
    s = t / (2.0 + t)
    s2 = s * s
    poly = xp.zeros_like(s)
    for k in range(14, 0, -1):  # (1/4)^28 / 29: the rest is below float64's rounding
        poly = poly * s2 + 1.0 / (2 * k + 1)
    return 2.0 * s * s2 * poly - 2.0 * s2 / (1.0 - s)


def _log_prefactor(xp, a, x):
    """log(x^a e^-x / Gamma(a)). For a >= 20 and x within 0.4 a (where it is not far below -745, and where
    PyTorch's kernel takes this care too) with Stirling's lgamma(a) = (a - 1/2) log a - a + log(2 pi) / 2 + R(a)
    it is a (log(1 + t) - t) + log(a / (2 pi)) / 2 - R(a), t = (x - a) / a: no large terms cancel, where
    a log x - lgamma(a) loses a's size times float64's rounding."""
    with np.errstate(all="ignore"):
        out = a * xp.log(x) - x - lgamma(a).astype(np.float64)
        t = (x - a) / a
        near = xp.nonzero((a >= 20.0) & (xp.abs(t) <= 0.4))[0]
        if not near.size:
            return out
        b, t = a[near], t[near]
        r = xp.zeros_like(b)  # R(a) = sum_k B_2k / (2k (2k - 1) a^(2k - 1)); at a >= 20 the 7th is below 1e-19
        for c in (-691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12):
            r = r / (b * b) + c
        out[near] = b * _log1pmx(xp, t) + 0.5 * xp.log(b / (2 * math.pi)) - r / b
    return out


def _gammaincc_uniform(xp, a, x):
    """(Q, P) for huge a and x near it: Temme's uniform expansion (DLMF 8.12.3-4), Q = erfc(eta sqrt(a/2)) / 2 +
    R, P = erfc(-eta sqrt(a/2)) / 2 - R, with eta^2 / 2 = x/a - 1 - log(x/a) (eta's sign that of x - a) and
    R = e^(-a eta^2 / 2) / sqrt(2 pi a) (C0(eta) + C1(eta) / a + ...); for a >= 1e7 and |eta| < 1e-3 the
    Taylor series C0 = -1/3 + eta/12 - 2 eta^2/135 + eta^3/864 + eta^4/2835, C1 = -1/540 - eta/288 + eta^2/378
    leave less than float64's rounding."""
    half_eta2 = -_log1pmx(xp, (x - a) / a)
    eta = xp.sign(x - a) * xp.sqrt(2.0 * half_eta2)
    c0 = -1 / 3 + eta * (1 / 12 + eta * (-2 / 135 + eta * (1 / 864 + eta / 2835)))
    c1 = -1 / 540 + eta * (-1 / 288 + eta / 378)
    r = xp.exp(-a * half_eta2) / xp.sqrt(2 * math.pi * a) * (c0 + c1 / a)
    z = eta * xp.sqrt(a / 2.0)
    return 0.5 * erfc(z) + r, 0.5 * erfc(-z) - r


def _gammaincc_small_a(xp, a, x):
    """Q(a, x) for small a > 0 and 0 < x <= 1.1 (DLMF 8.7.3): 1 - x^a / Gamma(1 + a) without cancellation
    (expm1 of a log x - log Gamma(1 + a)), minus a x^a / Gamma(1 + a) sum_(n>=1) (-x)^n / (n! (a + n))."""
    term = xp.ones_like(x)
    total = xp.zeros_like(x)
    for n in range(1, 26):  # 1.1^25 / 25! ~ 1e-24: the rest is below float64's rounding
        term = term * (-x / n)
        total += term / (a + n)
    poly = xp.zeros_like(a)
    for c in _lgamma_series()[0]:  # log Gamma(1 + a) by its Taylor series at 1, for a <= 0.25
        poly = (poly + c) * a
    lgamma1p = xp.where(a <= _LGAMMA_SERIES_RADIUS, poly, lgamma(1.0 + a).astype(np.float64))
    log_f = a * xp.log(x) - lgamma1p  # log(x^a / Gamma(1 + a)); x^a / Gamma(a) = a times that
    return -xp.expm1(log_f) - a * xp.exp(log_f) * total


def standard_gamma_grad(a, x):
    """dx/da for a draw x of Gamma(a, 1) held at its quantile u = P(a, x) (implicit reparameterization):
    dx/da = -(dP/da) / (dP/dx), with dP/dx the density x^(a-1) e^-x / Gamma(a), in float64.

    dP/da has no closed form: it is a central difference in a of whichever of P and Q = 1 - P gammainc
    computes directly at (a, x) (P below x = a + 1, Q above), so that a tail's small value keeps its
    relative accuracy. The step, 1e-4 of a's scale (a below 1, sqrt(a) above: the width of P's change in
    a), leaves an error near 1e-8 relative, below float32's resolution."""
    xp = np if isinstance(a, np.ndarray) else _array_module(a)
    a, x = xp.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    shape = a.shape
    a, x = a.reshape(-1), x.reshape(-1)
    h = 1e-4 * xp.minimum(a, xp.sqrt(a))
    dp = xp.empty_like(a)
    with np.errstate(all="ignore"):
        for below in (True, False):
            i = xp.nonzero((x < a + 1.0) == below)[0]
            ai, xi, hi = a[i], x[i], h[i]
            diff = gammainc(ai + hi, xi, upper=not below) - gammainc(ai - hi, xi, upper=not below)
            dp[i] = (diff if below else -diff) / (2.0 * hi)
        density = xp.exp((a - 1.0) * xp.log(x) - x - lgamma(a).astype(np.float64))
        return (-dp / density).reshape(shape)
