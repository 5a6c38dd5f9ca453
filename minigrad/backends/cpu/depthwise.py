"""A depthwise 2-D convolution on the CPU (groups == in_channels: MobileNet's 3 x 3 and 5 x 5, ConvNeXt's
7 x 7, and Mamba's causal Conv1d as a conv of height 1), its input gradient and its weight gradient, as
compiled loops over each channel's plane.

The general path makes columns of K rows per channel (a copy of K times the input, moved batch last) for a
product whose inner dimension is K alone, then moves the product back batch first, and its input gradient
adds K slabs back (col2im): the copies, not the K multiply-adds per output, were its cost. Here each channel's
plane is copied once, zero-padded, into a small buffer that stays in the cache, split by the stride into its
sh * sw phases (phase (a, b) holds the padded rows a, a + sh, ... and columns b, b + sw, ...). A kernel
offset then reads one phase shifted by a fixed amount, so each offset is one pass of OH * Wq multiply-adds
over the phase's whole rows (Wq: a phase's width; the Wq - OW extra positions per row are dropped), which
LLVM vectorizes, where passes along output rows of 4 or 8 positions were loop overhead on small maps.

Output channel o = c M + m reads input channel c (M = out_channels / in_channels, the channel multiplier):

    forward       y[n, o] = bias[o] + sum over offsets (i, j) of w[o, i, j] x[n, c] shifted by (i, j)
    input grad    gx[n, c] = sum over m and offsets of w[o, i, j] g[n, o] added back at the offset: the
                  forward's passes reversed, into the phases
    weight grad   gw[o, i, j] = sum over images of g[n, o]'s dot product with the offset's shifted phase

Each sum is the general path's terms in another order (the same values at float rounding; tested against it
and PyTorch). Work is cut by whole input planes (n, c) (forward, input grad) or an input channel's M output
channels (the weight grad), each summed by one thread in a fixed order: the bits do not depend on the number of threads.
"""
import math

import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)


def supports(a, b, channels, out_channels, groups, kernel, out):
    """float32 / float64 numpy arrays with elements, `a` 4-D (a conv's input or output gradient: the 2-D
    kernel's, a Conv1d's as height 1), one group per input channel (more than one: a single-channel conv
    is the image-by-image path's) and out_channels a multiple of it, with more output positions than kernel
    offsets (where a plane is smaller than its kernel, as a 5 x 5 kernel on a 4 x 4 map, most of each
    offset's pass lands in the padding, and the general path's columns are the faster)."""
    return (floats(a, b) and a.ndim == 4 and a.size > 0 and b.size > 0 and groups == channels > 1
            and out_channels % groups == 0 and math.prod(out) > math.prod(kernel))


def _geometry(kernel, stride, dilation, pads, shape, out):
    """The kernels' int arguments: the plane, the output, the kernel, stride, dilation, low pads, and each phase's
    rows and width (Hq, Wq), enough for every window's rows and columns."""
    H, W = shape[2], shape[3]
    Hq = -(-((out[0] - 1) * stride[0] + (kernel[0] - 1) * dilation[0] + 1) // stride[0])
    Wq = -(-((out[1] - 1) * stride[1] + (kernel[1] - 1) * dilation[1] + 1) // stride[1])
    return tuple(int(v) for v in (H, W, out[0], out[1], kernel[0], kernel[1], stride[0], stride[1], dilation[0],
                                  dilation[1], pads[0][0], pads[1][0], Hq, Wq))


def _room(parts, geometry, dtype):
    """Per share: the phases (and a tail the last offsets' dropped positions read) and one output plane of width
    Wq (made here: see max_pool.py on arrays made inside a cached kernel)."""
    OH, kw, sh, sw, dw, Hq, Wq = (geometry[i] for i in (2, 5, 6, 7, 9, 12, 13))
    shares = max(parts, 1)
    return (np.zeros((shares, sh * sw * Hq * Wq + (kw - 1) * dw // sw + 1), dtype=dtype),
            np.zeros((shares, OH * Wq), dtype=dtype))


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
    geometry = _geometry(w.shape[2:], stride, dilation, pads, x.shape, out)
    parts = _parts(_forward_team, y.size)
    phases, plane = _room(parts, geometry, x.dtype)
    if parts:
        _forward_team(y.reshape(-1), xf, wf, b, N * C, C, O, *geometry, phases, plane, parts)
    else:
        _forward(y.reshape(-1), xf, wf, b, 0, N * C, C, O, *geometry, phases[0], plane[0])
    return y


def input_grad(g, w, shape, stride, pads, dilation, out):
    """g (N, O, OH, OW), w (O, 1, kh, kw) -> the input's gradient, `shape` (N, C, H, W)."""
    N, C = shape[:2]
    O = w.shape[0]
    gf = np.ascontiguousarray(g).reshape(-1)
    wf = np.ascontiguousarray(w).reshape(-1)
    gx = np.empty(shape, dtype=g.dtype)
    geometry = _geometry(w.shape[2:], stride, dilation, pads, shape, out)
    parts = _parts(_input_team, gx.size)
    phases, plane = _room(parts, geometry, g.dtype)
    if parts:
        _input_team(gx.reshape(-1), gf, wf, N * C, C, O, *geometry, phases, plane, parts)
    else:
        _input(gx.reshape(-1), gf, wf, 0, N * C, C, O, *geometry, phases[0], plane[0])
    return gx


def weight_grad(x, g, kernel, stride, pads, dilation):
    """x (N, C, H, W), g (N, O, OH, OW) -> the weight's gradient (O, 1, *kernel)."""
    N, C = x.shape[:2]
    O = g.shape[1]
    xf = np.ascontiguousarray(x).reshape(-1)
    gf = np.ascontiguousarray(g).reshape(-1)
    gw = np.empty((O, 1) + tuple(kernel), dtype=x.dtype)
    geometry = _geometry(kernel, stride, dilation, pads, x.shape, g.shape[2:])
    parts = _parts(_weight_team, g.size * kernel[0] * kernel[1])
    phases, plane = _room(parts, geometry, x.dtype)
    if parts:
        _weight_team(gw.reshape(-1), xf, gf, N, C, O, *geometry, phases, plane, parts)
    else:
        _weight(gw.reshape(-1), xf, gf, 0, C, N, C, O, *geometry, phases[0], plane[0])
    return gw


@team.kernel
def _columns(b, sw, pw, W, Wq):
    # [v0, v1): the phase columns v (of phase column b) whose padded column v sw + b lies on the plane
    v0 = min(max((pw - b + sw - 1) // sw, 0), Wq)
    return v0, max(min((W + pw - b + sw - 1) // sw, Wq), v0)


@team.kernel
def _split(phases, x, base, H, W, sh, sw, ph, pw, Hq, Wq):
    # phases (sh * sw * Hq * Wq + tail,) <- the plane x[base:] zero-padded, phase (a, b)'s element (u, v) the padded
    # plane's (u sh + a, v sw + b); the tail is left as it is (zeros)
    zero = phases.dtype.type(0)
    for a in range(sh):
        for b in range(sw):
            v0, v1 = _columns(b, sw, pw, W, Wq)
            for u in range(Hq):
                r = u * sh + a - ph
                d = ((a * sw + b) * Hq + u) * Wq
                if r < 0 or r >= H:
                    for v in range(Wq):
                        phases[d + v] = zero
                    continue
                for v in range(v0):
                    phases[d + v] = zero
                src = base + r * W + b - pw
                for v in range(v0, v1):
                    phases[_U(d + v)] = x[_U(src + v * sw)]
                for v in range(v1, Wq):
                    phases[d + v] = zero


@team.kernel
def _merge(gx, phases, base, H, W, sh, sw, ph, pw, Hq, Wq):
    # _split's adjoint on the plane gx[base:]: each element the phases' element it was copied to (zeros first, for
    # the rows and columns past the last window's, which no window reads)
    for e in range(base, base + H * W):
        gx[_U(e)] = 0
    for a in range(sh):
        for b in range(sw):
            v0, v1 = _columns(b, sw, pw, W, Wq)
            for u in range(Hq):
                r = u * sh + a - ph
                if r < 0 or r >= H:
                    continue
                d = ((a * sw + b) * Hq + u) * Wq
                dst = base + r * W + b - pw
                for v in range(v0, v1):
                    gx[_U(dst + v * sw)] = phases[_U(d + v)]


@team.kernel
def _shift(ki, kj, sh, sw, dh, dw, Hq, Wq):
    # where offset (ki, kj)'s pass starts in the phases: its rows and columns' phase, then its shift inside it
    a, b = ki * dh % sh, kj * dw % sw
    return ((a * sw + b) * Hq + ki * dh // sh) * Wq + kj * dw // sw


@team.kernel
def _widen(plane, g, base, OH, OW, Wq):
    # plane (OH * Wq,) <- g[base:]'s OH x OW plane, each row followed by Wq - OW zeros (which add nothing)
    zero = plane.dtype.type(0)
    for i in range(OH):
        for j in range(OW):
            plane[i * Wq + j] = g[_U(base + i * OW + j)]
        for j in range(OW, Wq):
            plane[i * Wq + j] = zero


@team.kernel
def _forward(y, x, w, b, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane):
    # input planes [lo, hi) of the N * C: each one's phases, then each of its M output planes summed in `plane`
    # (the bias, then a pass per offset) and copied into y without the extra positions
    M = O // C
    K = kh * kw
    L = OH * Wq
    for p in range(lo, hi):
        _split(phases, x, p * H * W, H, W, sh, sw, ph, pw, Hq, Wq)
        for m in range(M):
            o = p % C * M + m
            bo = b[o] if len(b) else y.dtype.type(0)
            for t in range(L):
                plane[t] = bo
            for ki in range(kh):
                for kj in range(kw):
                    wv = w[o * K + ki * kw + kj]
                    s = _shift(ki, kj, sh, sw, dh, dw, Hq, Wq)
                    for t in range(L):
                        plane[t] += wv * phases[_U(s + t)]
            q = (p // C * O + o) * OH * OW
            for i in range(OH):
                for j in range(OW):
                    y[_U(q + i * OW + j)] = plane[i * Wq + j]


@team.kernel
def _input(gx, g, w, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane):
    # input planes [lo, hi) of gx (N * C): the phases zeroed, each of the M output planes' g (widened with zeros)
    # added back at every offset (the forward's passes reversed), then the phases merged back into the plane
    M = O // C
    K = kh * kw
    L = OH * Wq
    zero = gx.dtype.type(0)
    for p in range(lo, hi):
        for e in range(len(phases)):
            phases[e] = zero
        for m in range(M):
            o = p % C * M + m
            _widen(plane, g, (p // C * O + o) * OH * OW, OH, OW, Wq)
            for ki in range(kh):
                for kj in range(kw):
                    wv = w[o * K + ki * kw + kj]
                    s = _shift(ki, kj, sh, sw, dh, dw, Hq, Wq)
                    for t in range(L):
                        phases[_U(s + t)] += wv * plane[t]
        _merge(gx, phases, p * H * W, H, W, sh, sw, ph, pw, Hq, Wq)


@team.kernel
def _weight(gw, x, g, lo, hi, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane):
    # the M output channels of input channels [lo, hi) of gw (O, kh * kw): per image, each offset's dot product of
    # the output plane's g (widened with zeros) with its shifted phase, added in image order
    M = O // C
    K = kh * kw
    L = OH * Wq
    for c in range(lo, hi):
        for k in range(c * M * K, (c + 1) * M * K):
            gw[k] = 0
        for n in range(N):
            _split(phases, x, (n * C + c) * H * W, H, W, sh, sw, ph, pw, Hq, Wq)
            for m in range(M):
                o = c * M + m
                _widen(plane, g, (n * O + o) * OH * OW, OH, OW, Wq)
                for ki in range(kh):
                    for kj in range(kw):
                        s0 = _shift(ki, kj, sh, sw, dh, dw, Hq, Wq)
                        s = gw.dtype.type(0)
                        for t in range(L):
                            s += plane[t] * phases[_U(s0 + t)]
                        gw[o * K + ki * kw + kj] += s


@team.kernel(parallel=True)
def _forward_team(y, x, w, b, P, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane, parts):
    for t in team.prange(parts):
        lo, hi = team.share(P, t, parts, 1)
        _forward(y, x, w, b, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases[t], plane[t])


@team.kernel(parallel=True)
def _input_team(gx, g, w, P, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane, parts):
    for t in team.prange(parts):
        lo, hi = team.share(P, t, parts, 1)
        _input(gx, g, w, lo, hi, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases[t], plane[t])


@team.kernel(parallel=True)
def _weight_team(gw, x, g, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases, plane, parts):
    for t in team.prange(parts):
        lo, hi = team.share(C, t, parts, 1)
        _weight(gw, x, g, lo, hi, N, C, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, Hq, Wq, phases[t],
                plane[t])
