"""Bessel functions on raw arrays (numpy or cupy), for minigrad.special: I0 and I1 (and their
exponentially scaled forms), K0 and K1 (and scaled), J0, J1, Y0, Y1 and the spherical j0.

Each is computed in float64 and returned in the input's floating dtype, by methods that keep full
float64 accuracy without tables of fitted coefficients:

* I_nu, nu = 0, 1: the power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!) (positive terms: no
  cancellation) for |x| <= 25, and the asymptotic series
      I_nu(x) ~ e^x / sqrt(2 pi x) sum_k t_k,  t_k = t_(k-1) ((2k-1)^2 - 4 nu^2) / (8 k x)
  above (30 terms: the truncation error is below 1e-20 there).
* K_nu: for x <= 2 the series of Abramowitz & Stegun 9.6.13 (K0) and 9.6.11 (K1); above, the
  trapezoidal rule on e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, which converges
  geometrically in the number of nodes for this analytic, doubly exponentially decaying integrand
  (step min(0.15, 0.6 / sqrt(x)), 48 nodes: error ~1e-22).
* J_nu, Y_nu, nu = 0, 1: for 0 < x <= 25 Miller's backward recurrence J_(k-1) = (2k/x) J_k - J_(k+1),
  normalized by J0 + 2 (J2 + J4 + ...) = 1, then Neumann's series
      Y0 = (2/pi) ((ln(x/2) + gamma) J0 + 2 sum_m (-1)^(m+1) J_2m / m)
  and Y1 = -Y0' from it; above 25 Hankel's asymptotic expansion (30 terms). Absolute accuracy
  ~1e-15, as Cephes's (relative accuracy is lost only next to the zeros).
"""
import math

import numpy as np

EULER_GAMMA = 0.57721566490153286061
_SERIES_TERMS = 50  # the power series of I_nu up to |x| = 25: the last term is below 1e-19 of the sum
_ASYMPTOTIC_TERMS = 30
_SWITCH = 25.0


def _float64(x):
    """(array module, result dtype, x as float64)."""
    from ..device import array_module

    xp = array_module(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return xp, dt, x.astype(np.float64)


# ---- I0, I1 ---------------------------------------------------------------------------------------
def _i_scaled(xp, y, nu):
    """e^-y I_nu(y) of float64 y >= 0 (or nan), nu = 0 or 1."""
    out = xp.empty_like(y)
    small = y <= _SWITCH
    ys = y[small]
    q = 0.25 * ys * ys
    term = xp.ones_like(ys) if nu == 0 else 0.5 * ys
    total = term.copy()
    for k in range(1, _SERIES_TERMS + 1):
        term = term * q / (k * (k + nu))
        total += term
    out[small] = total * xp.exp(-ys)
    big = ~small
    yb = y[big]
    t = xp.ones_like(yb)
    total = t.copy()
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        t = t * (((2 * k - 1) ** 2 - 4 * nu * nu) / (8.0 * k)) / yb
        total += t
    out[big] = total / xp.sqrt(2.0 * math.pi * yb)
    return out


def bessel_i(x, nu, scaled=False):
    """I_nu(x) (scaled: e^-|x| I_nu(x)) elementwise, nu = 0 or 1 (I0 is even, I1 odd)."""
    xp, dt, v = _float64(x)
    y = xp.abs(v)
    with np.errstate(all="ignore"):
        r = _i_scaled(xp, y, nu)
        if not scaled:
            half = xp.exp(0.5 * y)  # (in two halves: I_nu is finite up to x ~ 713, e^x only up to ~ 709)
            r = xp.where(xp.isinf(y), np.inf, r * half * half)
        if nu == 1:
            r = xp.where(v < 0, -r, r)
    return r.astype(dt, copy=False)


# ---- K0, K1 ---------------------------------------------------------------------------------------
def _k_series(xp, y, nu):
    """K_nu(y) for 0 < y <= 2 (A&S 9.6.13, 9.6.11):
        K0 = -(ln(y/2) + gamma) I0(y) + sum_k H_k q^k / (k!)^2,                    q = y^2/4
        K1 = 1/y + ln(y/2) I1(y) - (y/4) sum_k (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!)."""
    q = 0.25 * y * y
    log_half = xp.log(0.5 * y)
    term = xp.ones_like(y)
    series = xp.ones_like(y)  # sum of q^k / (k! (k+nu)!)
    weighted = xp.zeros_like(y) if nu == 0 else (1.0 - 2.0 * EULER_GAMMA) * term  # psi(1) + psi(2) = 1 - 2 gamma
    harmonic = 0.0
    for k in range(1, 31):
        term = term * q / (k * (k + nu))
        harmonic += 1.0 / k
        series += term
        weighted += (harmonic if nu == 0 else 2.0 * harmonic + 1.0 / (k + 1) - 2.0 * EULER_GAMMA) * term
    if nu == 0:
        return -(log_half + EULER_GAMMA) * series + weighted
    return 1.0 / y + log_half * (0.5 * y) * series - 0.25 * y * weighted


def _k_scaled_quadrature(xp, y, nu):
    """e^y K_nu(y) for y > 2 (finite): the trapezoidal rule on int_0^inf exp(-y (cosh t - 1)) cosh(nu t) dt."""
    h = xp.minimum(0.15, 0.6 / xp.sqrt(y))
    total = xp.full_like(y, 0.5)
    for j in range(1, 49):
        t = j * h
        s = xp.sinh(0.5 * t)
        f = xp.exp(-2.0 * y * s * s)  # cosh t - 1 = 2 sinh^2(t/2), without cancellation
        total += f if nu == 0 else f * xp.cosh(t)
    return total * h


def bessel_k(x, nu, scaled=False):
    """K_nu(x) (scaled: e^x K_nu(x)) elementwise, nu = 0 or 1: inf at 0, nan for x < 0."""
    xp, dt, v = _float64(x)
    out = xp.full_like(v, np.nan)
    with np.errstate(all="ignore"):
        small = (v > 0) & (v <= 2.0)
        ys = v[small]
        k = _k_series(xp, ys, nu)
        out[small] = k * xp.exp(ys) if scaled else k
        big = (v > 2.0) & xp.isfinite(v)
        yb = v[big]
        k = _k_scaled_quadrature(xp, yb, nu)
        out[big] = k if scaled else k * xp.exp(-yb)
        out[v == 0] = np.inf
        out[v == np.inf] = 0.0
    return out.astype(dt, copy=False)


# ---- J0, J1, Y0, Y1 -------------------------------------------------------------------------------
def _miller(xp, x):
    """(J0, J1, Y0, Y1) of float64 1e-8 < x <= 25 (1-D), by Miller's backward recurrence."""
    start = 2 * int(math.ceil((float(x.max()) + 40.0) / 2.0))  # even; J_start(x) < 1e-19 for x <= 25
    b_next = xp.zeros_like(x)  # b_(k+1)
    b = xp.ones_like(x)  # b_k, from k = start down
    norm = 2.0 * b  # J0 + 2 (J2 + J4 + ...), unnormalized
    y0_sum = (-1.0) ** (start // 2 + 1) * b / (start // 2)  # sum_m (-1)^(m+1) J_2m / m
    y1_sum = xp.zeros_like(x)  # J1 + sum_j (-1)^j (2j+1) / (j (j+1)) J_(2j+1)
    two_over_x = 2.0 / x
    for k in range(start, 0, -1):
        b, b_next = k * two_over_x * b - b_next, b  # b_(k-1)
        m = k - 1
        if m % 2 == 0 and m >= 2:
            norm += 2.0 * b
            y0_sum += ((-1.0) ** (m // 2 + 1) / (m // 2)) * b
        elif m % 2 == 1:
            j = m // 2
            y1_sum += (1.0 if j == 0 else (-1.0) ** j * (2 * j + 1) / (j * (j + 1))) * b
        big = xp.abs(b) > 1e250
        if bool(big.any()):  # rescale those elements (the recurrence grows by up to 2k/x a step)
            scale = xp.where(big, 1e-250, 1.0)
            b, b_next, norm, y0_sum, y1_sum = b * scale, b_next * scale, norm * scale, y0_sum * scale, y1_sum * scale
    norm += b  # b is b_0 now, b_next b_1
    j0, j1 = b / norm, b_next / norm
    log_term = xp.log(0.5 * x) + EULER_GAMMA
    y0 = (2.0 / math.pi) * (log_term * j0 + 2.0 * y0_sum / norm)
    y1 = -(2.0 / math.pi) * (j0 / x - log_term * j1 + y1_sum / norm)
    return j0, j1, y0, y1


def _tiny(xp, x):
    """(J0, J1, Y0, Y1) of 0 < x <= 1e-8: the series' leading terms (the rest is below 1e-32 relative)."""
    log_term = xp.log(0.5 * x) + EULER_GAMMA
    j0 = 1.0 - 0.25 * x * x
    y0 = (2.0 / math.pi) * log_term * j0 + x * x / (2.0 * math.pi)
    y1 = -2.0 / (math.pi * x) + (x / math.pi) * log_term - x / (2.0 * math.pi)
    return j0, 0.5 * x, y0, y1


def _hankel(xp, x, nu):
    """(J_nu, Y_nu) of float64 x > 25 by Hankel's expansion: sqrt(2/(pi x)) (P cos c - Q sin c) and
    sqrt(2/(pi x)) (P sin c + Q cos c), c = x - (nu/2 + 1/4) pi, cos c and sin c from cos x and sin x
    (no rounding of x - c)."""
    t = xp.ones_like(x)
    p, q = t.copy(), xp.zeros_like(x)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        t = t * ((4 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k)) / x
        if k % 2:
            q += t if k % 4 == 1 else -t
        else:
            p += t if k % 4 == 0 else -t
    s, c = xp.sin(x), xp.cos(x)
    if nu == 0:
        cos_c, sin_c = c + s, s - c  # times sqrt(2)
    else:
        cos_c, sin_c = s - c, -(s + c)
    amp = 1.0 / xp.sqrt(math.pi * x)  # sqrt(2/(pi x)) / sqrt(2)
    return amp * (p * cos_c - q * sin_c), amp * (p * sin_c + q * cos_c)


def bessel_jy(x, kind, nu):
    """J_nu(x) (kind "j") or Y_nu(x) (kind "y") elementwise, nu = 0 or 1. J0 is even, J1 odd; Y is
    -inf at 0 and nan for x < 0."""
    xp, dt, v = _float64(x)
    y = xp.abs(v)
    out = xp.full_like(v, np.nan)
    with np.errstate(all="ignore"):
        pick = 0 if kind == "j" else 2
        for sel, fn in (((y > 0) & (y <= 1e-8), _tiny), ((y > 1e-8) & (y <= _SWITCH), _miller)):
            if bool(sel.any()):
                out[sel] = fn(xp, y[sel])[pick + nu]
        sel = ~(y <= _SWITCH)  # (nan and inf too: Hankel's expansion gives nan there, as PyTorch)
        if bool(sel.any()):
            out[sel] = _hankel(xp, y[sel], nu)[0 if kind == "j" else 1]
        if kind == "j":
            out[y == 0] = 1.0 if nu == 0 else 0.0
            if nu == 1:
                out = xp.where(v < 0, -out, out)
        else:
            out[v == 0] = -np.inf
            out[v < 0] = np.nan
    return out.astype(dt, copy=False)


def spherical_j0(x):
    """sin(x) / x, elementwise: its Taylor series for |x| < 0.5 (1 at 0), 0 at +-inf."""
    xp, dt, v = _float64(x)
    with np.errstate(all="ignore"):
        z = v * v
        series = xp.ones_like(v)
        for d in (210.0, 156.0, 110.0, 72.0, 42.0, 20.0, 6.0):  # 1 - z/6 (1 - z/20 (1 - z/42 (...)))
            series = 1.0 - z / d * series
        out = xp.where(xp.abs(v) < 0.5, series, xp.sin(v) / v)
        out = xp.where(xp.isinf(v), 0.0, out)
    return out.astype(dt, copy=False)
