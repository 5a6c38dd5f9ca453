"""batch_norm's training step on the CPU for (N, C) input (BatchNorm1d's usual): the statistics and the
normalization in three loops over the rows, where the op's numpy form makes some twenty passes with
their temporaries; backward in two. The per-channel sums run down the rows in order (numpy's sum
pairs them up): other roundings than the numpy code's. One thread: a per-channel sum cut across
threads would round by the cut.

(N, C, S) input (BatchNorm2d/3d's (N, C, H, W) seen with its planes flat) has loops of its own: each
(i, c) plane summed along S (the compiled loop keeps several partial sums, as numpy's pairwise sum
does), the planes' sums added into the channel's in order of i; one pass over x per statistic, one for
y, where numpy's reductions over axes (0, 2, 3) are strided loops of a short plane each.
"""
import numpy as np

from . import floats, team


def supports(x, w, b):
    """(N, C) or (N, C, S) contiguous numpy float arrays of one dtype; w, b (C,) or None."""
    return floats(x, w, b) and 2 <= x.ndim <= 3 and x.size > 0 and x.flags.c_contiguous


def forward(x, w, b, eps):
    """-> (y, stats): y the batch-normalized x, stats (5, C): mean, (biased) var, 1/std, and the scale
    and shift that made y (y = x scale + shift)."""
    N, C = x.shape[:2]
    dt = x.dtype.type
    none = x[0, 0, :0] if x.ndim == 3 else x[0, :0]  # an empty stand-in for a missing weight or bias
    y, stats = np.empty_like(x), np.empty((5, C), dtype=x.dtype)
    kernel = _forward if x.ndim == 2 else _forward_planes
    kernel(y, stats, x, none if w is None else w, none if b is None else b, dt(eps), dt(x.size // C))
    return y, stats


def backward(g, x, mean, rstd, w, need_gx):
    """-> (gx or None, gw, gb) from forward's mean and 1/std, g x's shape."""
    C = x.shape[1]
    g = np.ascontiguousarray(g, dtype=x.dtype)
    gx = np.empty_like(x) if need_gx else x[:0]
    sums = np.empty((5, C), dtype=x.dtype)
    none = x[0, 0, :0] if x.ndim == 3 else x[0, :0]
    kernel = _backward if x.ndim == 2 else _backward_planes
    kernel(gx, sums, g, x, mean, rstd, none if w is None else w, x.dtype.type(x.size // C))
    return (gx if need_gx else None), sums[1].copy(), sums[0].copy()


@team.kernel
def _scale_shift(stats, w, b, eps, n):  # var (a sum) / n; rstd = 1 / sqrt(var + eps); y's scale a and shift s per channel
    mean, var, rstd, scale, shift = stats[0], stats[1], stats[2], stats[3], stats[4]
    one = n / n
    for c in range(mean.shape[0]):
        var[c] = var[c] / n
        r = one / np.sqrt(var[c] + eps)
        rstd[c] = r
        a = r * w[c] if w.size else r
        scale[c] = a
        shift[c] = b[c] - mean[c] * a if b.size else -(mean[c] * a)


@team.kernel
def _forward(y, stats, x, w, b, eps, n):  # mean, var over the rows; y = x a + s, a = w / sqrt(var + eps), s = b - mean a
    N, C = x.shape
    mean, var, scale, shift = stats[0], stats[1], stats[3], stats[4]
    zero = n - n
    for c in range(C):
        mean[c] = zero
        var[c] = zero
    for i in range(N):
        for c in range(C):
            mean[c] += x[i, c]
    for c in range(C):
        mean[c] = mean[c] / n
    for i in range(N):
        for c in range(C):
            d = x[i, c] - mean[c]
            var[c] += d * d
    _scale_shift(stats, w, b, eps, n)
    for i in range(N):
        for c in range(C):
            y[i, c] = x[i, c] * scale[c] + shift[c]


@team.kernel
def _backward(gx, sums, g, x, mean, rstd, w, n):  # gb = sum g, gw = sum g x_hat; gx = k (g - gb/n - x_hat gw/n), k = rstd w
    N, C = g.shape
    gb, gw, k, gbn, gwn = sums[0], sums[1], sums[2], sums[3], sums[4]
    zero = n - n
    for c in range(C):
        gb[c] = zero
        gw[c] = zero
    for i in range(N):
        for c in range(C):
            gi = g[i, c]
            gb[c] += gi
            gw[c] += gi * ((x[i, c] - mean[c]) * rstd[c])
    if gx.size:
        for c in range(C):
            k[c] = rstd[c] * w[c] if w.size else rstd[c]
            gbn[c] = gb[c] / n
            gwn[c] = gw[c] / n
        for i in range(N):
            for c in range(C):
                xhat = (x[i, c] - mean[c]) * rstd[c]
                gx[i, c] = k[c] * (g[i, c] - gbn[c] - xhat * gwn[c])


@team.kernel
def _forward_planes(y, stats, x, w, b, eps, n):  # _forward's, with a plane of S values per (i, c)
    N, C, S = x.shape
    mean, var, scale, shift = stats[0], stats[1], stats[3], stats[4]
    zero = n - n
    for c in range(C):
        mean[c] = zero
        var[c] = zero
    for i in range(N):
        for c in range(C):
            s = zero
            for k in range(S):
                s += x[i, c, k]
            mean[c] += s
    for c in range(C):
        mean[c] = mean[c] / n
    for i in range(N):
        for c in range(C):
            m = mean[c]
            s = zero
            for k in range(S):
                d = x[i, c, k] - m
                s += d * d
            var[c] += s
    _scale_shift(stats, w, b, eps, n)
    for i in range(N):
        for c in range(C):
            a, t = scale[c], shift[c]
            for k in range(S):
                y[i, c, k] = x[i, c, k] * a + t


@team.kernel
def _backward_planes(gx, sums, g, x, mean, rstd, w, n):  # _backward's, with a plane of S values per (i, c)
    N, C, S = g.shape
    gb, gw, k, gbn, gwn = sums[0], sums[1], sums[2], sums[3], sums[4]
    zero = n - n
    for c in range(C):
        gb[c] = zero
        gw[c] = zero
    for i in range(N):
        for c in range(C):
            m, r = mean[c], rstd[c]
            sb = zero
            sw = zero
            for j in range(S):
                gi = g[i, c, j]
                sb += gi
                sw += gi * ((x[i, c, j] - m) * r)
            gb[c] += sb
            gw[c] += sw
    if gx.size:
        for c in range(C):
            k[c] = rstd[c] * w[c] if w.size else rstd[c]
            gbn[c] = gb[c] / n
            gwn[c] = gw[c] / n
        for i in range(N):
            for c in range(C):
                m, r, kc, b0, w0 = mean[c], rstd[c], k[c], gbn[c], gwn[c]
                for j in range(S):
                    xhat = (x[i, c, j] - m) * r
                    gx[i, c, j] = kc * (g[i, c, j] - b0 - xhat * w0)
