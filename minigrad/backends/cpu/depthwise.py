"""A depthwise 2-D convolution on the CPU (groups == in_channels: MobileNet's 3 x 3 and 5 x 5, ConvNeXt's
7 x 7, and Mamba's causal Conv1d as a conv of height 1), its input gradient and its weight gradient, as
compiled loops over each channel's plane.

The general path makes columns of K rows per channel (a copy of K times the input, moved batch last) for a
product whose inner dimension is K alone, then moves the product back batch first, and its input gradient
adds K slabs back (col2im): the copies, not the K multiply-adds per output, were its cost. Here each output
row is summed in place, one pass per kernel offset over the row's windows that lie inside the input (the
padding adds nothing, so it is skipped, not written), which LLVM vectorizes along the row.

Output channel o = c M + m reads input channel c (M = out_channels / in_channels, the channel multiplier):

    forward       y[n, o] = bias[o] + sum over offsets (i, j) of w[o, i, j] x[n, c] shifted by (i, j)
    input grad    gx[n, c] = sum over m and offsets of w[o, i, j] g[n, o] added back at the offset: the
                  forward's adjoint, a scatter-add in output order
    weight grad   gw[o, i, j] = sum over images and output rows of the row's dot product with x's shifted row

Each sum is the general path's terms in another order (the same values at float rounding; tested against it
and PyTorch). Work is cut by whole planes (forward: (n, o); input grad: (n, c)) or whole output channels (the
weight grad), each summed by one thread in a fixed order: the bits do not depend on the number of threads.
"""
import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)


def supports(a, b, channels, out_channels, groups):
    """float32 / float64 numpy arrays with elements, `a` 4-D (a conv's input or output gradient: the 2-D
    kernel's, a Conv1d's as height 1), one group per input channel (more than one: a single-channel conv
    is the image-by-image path's) and out_channels a multiple of it."""
    return (floats(a, b) and a.ndim == 4 and a.size > 0 and b.size > 0 and groups == channels > 1
            and out_channels % groups == 0)


def _args(kernel, stride, dilation, pads, shape, out):
    return tuple(int(v) for v in (shape[2], shape[3], out[0], out[1], kernel[0], kernel[1], stride[0], stride[1],
                                  dilation[0], dilation[1], pads[0][0], pads[1][0]))


def _parts(kernel, size):
    return kernel.threads() if size >= team.TEAM_MIN_ELEMENTS and kernel.on_team() else 0


def forward(x, w, stride, pads, dilation, out, bias=None):
    """x (N, C, H, W), w (O, 1, kh, kw), bias (O,) or None -> y (N, O, OH, OW)."""
    N, C = x.shape[:2]
    O = w.shape[0]
    xf = np.ascontiguousarray(x).reshape(-1)
    wf = np.ascontiguousarray(w).reshape(-1)
    b = np.zeros(0, dtype=x.dtype) if bias is None else np.ascontiguousarray(bias)
    y = np.empty((N, O) + tuple(out), dtype=x.dtype)
    args = _args(w.shape[2:], stride, dilation, pads, x.shape, out)
    parts = _parts(_forward_team, y.size)
    if parts:
        _forward_team(y.reshape(-1), xf, wf, b, N * O, C, O, *args, parts)
    else:
        _forward(y.reshape(-1), xf, wf, b, 0, N * O, C, O, *args)
    return y


def input_grad(g, w, shape, stride, pads, dilation, out):
    """g (N, O, OH, OW), w (O, 1, kh, kw) -> the input's gradient, `shape` (N, C, H, W)."""
    N, C = shape[:2]
    O = w.shape[0]
    gf = np.ascontiguousarray(g).reshape(-1)
    wf = np.ascontiguousarray(w).reshape(-1)
    gx = np.empty(shape, dtype=g.dtype)
    args = _args(w.shape[2:], stride, dilation, pads, shape, out)
    parts = _parts(_input_team, gx.size)
    if parts:
        _input_team(gx.reshape(-1), gf, wf, N * C, C, O, *args, parts)
    else:
        _input(gx.reshape(-1), gf, wf, 0, N * C, C, O, *args)
    return gx


def weight_grad(x, g, kernel, stride, pads, dilation):
    """x (N, C, H, W), g (N, O, OH, OW) -> the weight's gradient (O, 1, *kernel)."""
    N, C = x.shape[:2]
    O = g.shape[1]
    xf = np.ascontiguousarray(x).reshape(-1)
    gf = np.ascontiguousarray(g).reshape(-1)
    gw = np.empty((O, 1) + tuple(kernel), dtype=x.dtype)
    args = _args(kernel, stride, dilation, pads, x.shape, g.shape[2:])
    parts = _parts(_weight_team, N * O * g.shape[2] * g.shape[3] * kernel[0] * kernel[1])
    if parts:
        _weight_team(gw.reshape(-1), xf, gf, N, C, O, *args, parts)
    else:
        _weight(gw.reshape(-1), xf, gf, 0, O, N, C, O, *args)
    return gw


@team.kernel
def _inside(n, k, d, p, s, o):
    # [q0, q1): the o windows' positions q whose element q s + k d - p lies in [0, n)
    off = k * d - p
    q0 = min(max((-off + s - 1) // s, 0), o)
    q1 = max(min((n - off + s - 1) // s, o), q0)
    return q0, q1


@team.kernel
def _forward(y, x, w, b, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw):
    # planes [lo, hi) of y (N * O planes of OH * OW), each the bias then every offset's pass over its row
    M = O // C
    K = kh * kw
    for p in range(lo, hi):
        o = p % O
        xc = (p // O * C + o // M) * H * W  # the plane's input channel
        bo = b[o] if len(b) else y.dtype.type(0)
        for i in range(OH):
            q = (p * OH + i) * OW
            for j in range(OW):
                y[_U(q + j)] = bo
            for ki in range(kh):
                r = i * sh + ki * dh - ph
                if r < 0 or r >= H:
                    continue
                for kj in range(kw):
                    q0, q1 = _inside(W, kj, dw, pw, sw, OW)
                    wv = w[o * K + ki * kw + kj]
                    src = xc + r * W + kj * dw - pw
                    for j in range(q0, q1):
                        y[_U(q + j)] += wv * x[_U(src + j * sw)]


@team.kernel
def _input(gx, g, w, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw):
    # planes [lo, hi) of gx (N * C planes of H * W): zeros, then each of the channel's M output planes' rows
    # added back at every offset, in output order
    M = O // C
    K = kh * kw
    for p in range(lo, hi):
        base = p * H * W
        for e in range(base, base + H * W):
            gx[_U(e)] = 0
        for m in range(M):
            o = p % C * M + m
            go = (p // C * O + o) * OH * OW
            for i in range(OH):
                for ki in range(kh):
                    r = i * sh + ki * dh - ph
                    if r < 0 or r >= H:
                        continue
                    for kj in range(kw):
                        q0, q1 = _inside(W, kj, dw, pw, sw, OW)
                        wv = w[o * K + ki * kw + kj]
                        dst = base + r * W + kj * dw - pw
                        src = go + i * OW
                        for j in range(q0, q1):
                            gx[_U(dst + j * sw)] += wv * g[_U(src + j)]


@team.kernel
def _weight(gw, x, g, lo, hi, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw):
    # output channels [lo, hi) of gw (O, kh * kw): each offset's sum over images, then rows, of the output
    # row's dot product with the input row it read
    M = O // C
    K = kh * kw
    for o in range(lo, hi):
        for k in range(K):
            gw[o * K + k] = 0
        for n in range(N):
            xc = (n * C + o // M) * H * W
            go = (n * O + o) * OH * OW
            for i in range(OH):
                for ki in range(kh):
                    r = i * sh + ki * dh - ph
                    if r < 0 or r >= H:
                        continue
                    for kj in range(kw):
                        q0, q1 = _inside(W, kj, dw, pw, sw, OW)
                        src = xc + r * W + kj * dw - pw
                        s = gw.dtype.type(0)
                        for j in range(q0, q1):
                            s += g[_U(go + i * OW + j)] * x[_U(src + j * sw)]
                        gw[o * K + ki * kw + kj] += s


@team.kernel(parallel=True)
def _forward_team(y, x, w, b, P, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, parts):
    for t in team.prange(parts):
        lo, hi = team.share(P, t, parts, 1)
        _forward(y, x, w, b, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw)


@team.kernel(parallel=True)
def _input_team(gx, g, w, P, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, parts):
    for t in team.prange(parts):
        lo, hi = team.share(P, t, parts, 1)
        _input(gx, g, w, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw)


@team.kernel(parallel=True)
def _weight_team(gw, x, g, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, parts):
    for t in team.prange(parts):
        lo, hi = team.share(O, t, parts, 1)
        _weight(gw, x, g, lo, hi, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw)
