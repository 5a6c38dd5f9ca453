"""avg_pool2d and avg_pool3d on the CPU: one compiled pass each way over the (N*C) independent planes (or
volumes), where the op's numpy form sums a strided view of the padded input (a padded copy first) and
scatters the gradient back with one pass of col2im per kernel offset.

A 2-d plane is a volume of depth 1. Forward is PyTorch's CPU loop's order: each window's sum starts at 0
and adds the window's elements inside the input row by row, left to right (padding adds nothing), then is
divided by the window's divisor, which the op computes (PyTorch's rule for count_include_pad, ceil_mode
and divisor_override) and passes here, one per output position. The loop runs window by window only along
a row's edges: inside, one pass per kernel element over all of an output row's windows adds that element
of each to its sum (LLVM vectorizes it), the same additions in the same order per window.

Backward zeroes each plane's gradient and adds each output's gradient / divisor to its window's elements
in output order, PyTorch's, so where windows overlap the sums are its bits. Along a row this is a pass per
kernel column over the row's windows, the columns taken right to left: an element's windows then come
left to right, as in PyTorch's loop.

Planes are independent: on the team (planes cut in shares) the bits are those of one thread.
"""
import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)


def supports(x, kernel, stride, padding, out):
    """float32 / float64 numpy (N, C, H, W) or (N, C, D, H, W) with elements, any strides; x is the forward's
    input or the backward's output gradient (the op asks for each)."""
    return floats(x) and x.ndim in (4, 5) and x.size > 0


def _volume(kernel, stride, padding, out, spatial):
    """The 2-d arguments as 3-d ones of depth 1, as ints."""
    lift = (lambda t, one: (one,) + tuple(t)) if len(kernel) == 2 else (lambda t, one: tuple(t))
    return tuple(int(v) for t, one in ((spatial, 1), (out, 1), (kernel, 1), (stride, 1), (padding, 0))
                 for v in lift(t, one))


def _divisors(divisor, out, dtype):
    """The divisor (a number, or one per output position) as a flat array of x's dtype, one per output position."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(divisor, dtype=dtype), tuple(out))).reshape(-1)


def forward(x, kernel, stride, padding, out, divisor):
    """y (N, C, *out): each window's sum over the input (padding: the windows' low side, per axis) / divisor."""
    P = x.shape[0] * x.shape[1]
    planes = np.ascontiguousarray(x).reshape(-1)
    y = np.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
    args = _volume(kernel, stride, padding, out, x.shape[2:])
    div = _divisors(divisor, out, x.dtype)
    if planes.size >= team.TEAM_MIN_ELEMENTS and _forward_team.on_team():
        _forward_team(y.reshape(-1), planes, div, P, *args, _forward_team.threads())
    else:
        _forward(y.reshape(-1), planes, div, 0, P, *args)
    return y


def backward(g, shape, kernel, stride, padding, out, divisor):
    """The input's gradient, `shape` (N, C, *spatial): each output's g / divisor added to its window's elements."""
    P = shape[0] * shape[1]
    g = np.ascontiguousarray(g).reshape(-1)
    gx = np.empty(shape, dtype=g.dtype)
    args = _volume(kernel, stride, padding, out, shape[2:])
    div = _divisors(divisor, out, g.dtype)
    # room for one output row's g / divisor per share (made here: an array made inside a numba function makes
    # loading it from numba's cache import numba's array module)
    parts = _backward_team.threads() if gx.size >= team.TEAM_MIN_ELEMENTS and _backward_team.on_team() else 0
    row = np.empty((max(parts, 1), args[5]), dtype=g.dtype)
    if parts:
        _backward_team(gx.reshape(-1), g, div, P, *args, row, parts)
    else:
        _backward(gx.reshape(-1), g, div, 0, P, *args, row[0])
    return gx


@team.kernel
def _inside(n, k, s, p, o):
    # [first, last) of the o windows (start j s - p, k long) that lie inside [0, n)
    first = min(o, (p + s - 1) // s)
    last = max(first, min(o, (n - k + p) // s + 1)) if n >= k else first
    return first, last


@team.kernel
def _forward(y, x, div, lo, hi, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw):
    # planes [lo, hi) of x (P, D, H, W) -> y (P, OD, OH, OW), both flat; div (OD OH OW,): each output's divisor
    j0, j1 = _inside(W, kw, sw, pw, OW)
    for p in range(lo, hi):
        for t in range(OD):
            for i in range(OH):
                q = ((p * OD + t) * OH + i) * OW
                for j in range(OW):
                    y[_U(q + j)] = 0
                for kt in range(kd):
                    d = t * sd - pd + kt
                    if d < 0 or d >= D:
                        continue
                    for kr in range(kh):
                        r = i * sh - ph + kr
                        if r < 0 or r >= H:
                            continue
                        o = ((p * D + d) * H + r) * W - pw  # (the row's column -pw: window j starts at o + j sw)
                        for j in range(j0):  # windows over the row's left edge
                            for kc in range(kw):
                                c = j * sw - pw + kc
                                if c >= 0 and c < W:
                                    y[_U(q + j)] += x[_U(o + j * sw + kc)]
                        for kc in range(kw):  # the windows inside the row: a pass over them per kernel column
                            for j in range(j0, j1):
                                y[_U(q + j)] += x[_U(o + j * sw + kc)]
                        for j in range(j1, OW):  # and over its right edge
                            for kc in range(kw):
                                c = j * sw - pw + kc
                                if c >= 0 and c < W:
                                    y[_U(q + j)] += x[_U(o + j * sw + kc)]
                e = (t * OH + i) * OW
                for j in range(OW):
                    y[_U(q + j)] = y[_U(q + j)] / div[_U(e + j)]


@team.kernel
def _backward(gx, g, div, lo, hi, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw, row):
    # planes [lo, hi) of gx (P, D, H, W) = zeros, then each output's g (P, OD, OH, OW) / div added to its window,
    # in output order; row (OW,): room for one output row's g / div
    j0, j1 = _inside(W, kw, sw, pw, OW)
    for p in range(lo, hi):
        for k in range(p * D * H * W, (p + 1) * D * H * W):
            gx[_U(k)] = 0
        for t in range(OD):
            for i in range(OH):
                q = ((p * OD + t) * OH + i) * OW
                e = (t * OH + i) * OW
                for j in range(OW):
                    row[j] = g[_U(q + j)] / div[_U(e + j)]
                for kt in range(kd):
                    d = t * sd - pd + kt
                    if d < 0 or d >= D:
                        continue
                    for kr in range(kh):
                        r = i * sh - ph + kr
                        if r < 0 or r >= H:
                            continue
                        o = ((p * D + d) * H + r) * W - pw
                        # kernel columns right to left: the windows adding to one element come left to right
                        for kc in range(kw - 1, -1, -1):
                            for j in range(j0):
                                c = j * sw - pw + kc
                                if c >= 0 and c < W:
                                    gx[_U(o + j * sw + kc)] += row[j]
                            for j in range(j0, j1):
                                gx[_U(o + j * sw + kc)] += row[j]
                            for j in range(j1, OW):
                                c = j * sw - pw + kc
                                if c >= 0 and c < W:
                                    gx[_U(o + j * sw + kc)] += row[j]


@team.kernel(parallel=True)
def _forward_team(y, x, div, P, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw, parts):
    for p in team.prange(parts):
        lo, hi = team.share(P, p, parts, 1)
        _forward(y, x, div, lo, hi, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw)


@team.kernel(parallel=True)
def _backward_team(gx, g, div, P, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw, row, parts):
    for p in team.prange(parts):
        lo, hi = team.share(P, p, parts, 1)
        _backward(gx, g, div, lo, hi, D, H, W, OD, OH, OW, kd, kh, kw, sd, sh, sw, pd, ph, pw, row[p])
