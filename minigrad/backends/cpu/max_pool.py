"""max_pool2d on the CPU: one compiled pass each way over the (N*C) independent H x W planes, where the
op's numpy form copies every window out (kh*kw copies of the input), takes an argmax, gathers the values
and computes the flat indices, then scatters the gradient back with one masked pass per kernel offset.

Forward is PyTorch's CPU loop (aten's cpu_max_pool), so values and indices are its: a window starts at
-inf with its index at the window's first element inside the input (padding never wins; a window of
-infs gives that element's index), and an element replaces the max where it is greater or NaN (ties:
the first in scan order, row by row; NaNs: the last NaN of the window, the value that NaN). Indices are
flat positions row * W + col in the plane (int64), as return_indices gives.

Where windows overlap vertically (stride below the dilated kernel's height: 3x3 stride 1 or 2), the max
is taken in two passes: each input row's maxima over every window's columns (once per row, where the
one-pass loop would read the row again for each window that covers it), then each window's over its rows'
maxima, top to bottom. Taking the later candidate only where it is greater or NaN makes the pair the
same choice as the one scan (the first max of the first row holding the window's max; the last NaN of the
last row holding one). Otherwise (2x2 stride 2) one pass reads each window. Either way, at stride 1 a
row's run of (at least four) windows inside it is read kernel element by element, each a vectorized pass
of selects over the run's windows (a compare-and-branch per element mispredicts on random data about
every other time: ~3x slower); at a larger stride (where that pass's loads are gathers) four neighbouring
windows inside their row go together (four independent compare-and-select chains instead of one); the
others one by one with the bounds checks. The arrays are read through flat unsigned offsets (no
negative-index arithmetic in the loops). A long window alone in its stretch of row (global pooling:
a window of the whole row or plane) is one dependent chain that way, element by element: its rows (or
the one stretch of its whole rows) are read by _run_max's vectorized passes instead, and folded in as
the scan would (the same choice: the last NaN, else the first max).

Backward zeroes each plane of the input's gradient and adds each window's gradient at its index in
output order: PyTorch's order, so where windows overlap the sums are its. An index outside the plane (a
window with no element in the input, which PyTorch's loop also points past it) adds nothing.

Planes are independent: on the team (planes cut in shares) the bits are those of one thread.
"""
import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)
_LONG = 16  # a window at least this wide, alone in its row's stretch, is read by _run_max


def supports(x, kernel, stride, dilation, padding, out):
    """float32 / float64 numpy (N, C, H, W) input with elements, any strides (forward makes it contiguous)."""
    return floats(x) and x.ndim == 4 and x.size > 0


def forward(x, kernel, stride, dilation, padding, out):
    """(y, idx): the max of each window, (N, C, oh, ow), and its flat index into the H x W plane (int64)."""
    N, C, H, W = x.shape
    shape = (N, C) + tuple(out)
    planes = np.ascontiguousarray(x).reshape(-1)
    y = np.empty(shape, dtype=x.dtype)
    idx = np.empty(shape, dtype=np.int64)
    args = (N * C, H, W, int(out[0]), int(out[1]), int(kernel[0]), int(kernel[1]), int(stride[0]), int(stride[1]),
            int(dilation[0]), int(dilation[1]), int(padding[0]), int(padding[1]), x.dtype.type(-np.inf))
    parts = _forward_team.threads() if planes.size >= team.TEAM_MIN_ELEMENTS and _forward_team.on_team() else 0
    # room for each share's row maxima and their positions, used where windows overlap vertically (made here:
    # an array made inside a numba function makes loading it from numba's cache import numba's array module)
    hv, hpos = np.empty((max(parts, 1), H * out[1]), dtype=x.dtype), np.empty((max(parts, 1), H * out[1]), np.int64)
    if parts:
        _forward_team(y.reshape(-1), idx.reshape(-1), planes, *args, hv, hpos, parts)
    else:
        _forward(y.reshape(-1), idx.reshape(-1), planes, 0, *args, hv[0], hpos[0])
    return y, idx


def backward(g, idx, shape):
    """The input's gradient, `shape` (N, C, H, W): zeros with g (N, C, oh, ow) added at the flat indices idx."""
    N, C, H, W = shape
    P = N * C
    g = np.ascontiguousarray(g).reshape(P, -1)
    gx = np.empty((P, H * W), dtype=g.dtype)
    i2 = idx.reshape(P, -1)
    if gx.size >= team.TEAM_MIN_ELEMENTS and _backward_team.on_team():
        _backward_team(gx, g, i2, _backward_team.threads())
    else:
        _backward(gx, g, i2, 0, P)
    return gx.reshape(shape)


@team.kernel
def _forward(y, idx, x, lo, hi, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, low, hv, hpos):
    # planes [lo, hi) of x (P, H, W) -> y, idx (P, OH, OW), all three flat; hv, hpos (H * OW,): room for each
    # input row's maxima over the windows' columns and where they are (where separable)
    separable = sh < (kh - 1) * dh + 1  # windows overlap vertically: an input row serves several output rows
    for p in range(lo, hi):
        o = p * H * W
        if separable:
            for r in range(H):
                _columns(hv, hpos, r * OW, x, o + r * W, W, OW, kw, sw, dw, pw, low)
        for i in range(OH):
            h = i * sh - ph
            h0 = h  # the window's first row inside the input
            while h0 < 0:
                h0 += dh
            q = (p * OH + i) * OW
            if not separable:
                _windows(y, idx, q, x, o, H, W, OW, h, h0, kh, kw, sw, dh, dw, pw, low)
                continue
            for j in range(OW):  # the rows' maxima folded in, top to bottom: each window's scan order
                w0 = j * sw - pw
                while w0 < 0:
                    w0 += dw
                y[_U(q + j)] = low
                idx[_U(q + j)] = h0 * W + w0
            for kr in range(kh):
                r = h + kr * dh
                if r >= 0 and r < H:
                    _fold(y, idx, q, hv, hpos, r * OW, OW, r * W)


@team.kernel
def _windows(y, idx, q, x, o, H, W, OW, h, h0, kh, kw, sw, dh, dw, pw, low):
    # the OW windows of one output row, rows h + kr dh (h0: the first inside), of the plane at x[o:]
    # -> y[q:q + OW], idx[q:q + OW] (flat positions in the plane)
    span = (kw - 1) * dw
    s1, s2, s3 = sw, 2 * sw, 3 * sw
    whole = kw == W and dh == 1  # windows of whole rows, one after another
    inside = min(OW, (W - 1 - span + pw) // sw + 1)  # windows before this one end inside the row
    j = 0
    while j < OW:
        w = j * sw - pw
        if sw == 1 and w >= 0 and inside - j >= 4:  # windows j .. inside - 1 inside the row: a pass per element
            n = inside - j
            for k in range(n):
                y[_U(q + j + k)] = low
                idx[_U(q + j + k)] = h0 * W + w + k
            for kr in range(kh):
                r = h + kr * dh
                if r >= 0 and r < H:
                    _scan(y, idx, q + j, n, x, o, r * W + w, kw, dw)
            j = inside
        elif j + 4 <= OW and w >= 0 and w + s3 + span < W:  # windows j .. j + 3, all inside the row
            m0 = m1 = m2 = m3 = low
            a0 = h0 * W + w
            a1, a2, a3 = a0 + s1, a0 + s2, a0 + s3
            for kr in range(kh):
                r = h + kr * dh
                if r >= 0 and r < H:
                    for kc in range(kw):
                        c = r * W + w + kc * dw
                        v0, v1, v2, v3 = x[_U(o + c)], x[_U(o + c + s1)], x[_U(o + c + s2)], x[_U(o + c + s3)]
                        if (v0 > m0) | (v0 != v0):
                            m0 = v0
                            a0 = c
                        if (v1 > m1) | (v1 != v1):
                            m1 = v1
                            a1 = c + s1
                        if (v2 > m2) | (v2 != v2):
                            m2 = v2
                            a2 = c + s2
                        if (v3 > m3) | (v3 != v3):
                            m3 = v3
                            a3 = c + s3
            y[_U(q + j)] = m0
            y[_U(q + j + 1)] = m1
            y[_U(q + j + 2)] = m2
            y[_U(q + j + 3)] = m3
            idx[_U(q + j)] = a0
            idx[_U(q + j + 1)] = a1
            idx[_U(q + j + 2)] = a2
            idx[_U(q + j + 3)] = a3
            j += 4
        elif dw == 1 and w >= 0 and w + kw <= W and (kw >= _LONG or whole and kh * W >= _LONG):
            # one long window inside its row (few windows a row), read by stretches: its rows, or (whole rows)
            # the one stretch of its rows inside the input
            m = low
            a = h0 * W + w
            for kr in range(1 if whole else kh):
                r, n = (h0, (min(h + kh, H) - h0) * W) if whole else (h + kr * dh, kw)
                if r >= 0 and r < H:
                    v, c = _run_max(x, o + r * W + w, n)
                    if (v > m) | (v != v):
                        m = v
                        a = r * W + w + c
            y[_U(q + j)] = m
            idx[_U(q + j)] = a
            j += 1
        else:  # one window, its elements checked against the input's edges
            w0 = w
            while w0 < 0:
                w0 += dw
            m = low
            a = h0 * W + w0
            for kr in range(kh):
                r = h + kr * dh
                if r >= 0 and r < H:
                    for kc in range(kw):
                        c = w + kc * dw
                        if c >= 0 and c < W:
                            v = x[_U(o + r * W + c)]
                            if (v > m) | (v != v):
                                m = v
                                a = r * W + c
            y[_U(q + j)] = m
            idx[_U(q + j)] = a
            j += 1


@team.kernel
def _scan(m, a, q, n, x, o, c, kw, dw):
    # one row's elements folded into the running maxima m[q:q + n] (their positions a) of n neighbouring
    # windows of stride 1 inside it, window k's at c + k + kc dw of the plane at x[o:]: kc by kc, each a pass
    # over the windows with selects (LLVM vectorizes it). (With a larger stride the pass's loads are gathers,
    # slower than the four-at-once loop.)
    for kc in range(kw):
        b = c + kc * dw
        for k in range(n):
            v = x[_U(o + b + k)]
            t = (v > m[_U(q + k)]) | (v != v)
            m[_U(q + k)] = v if t else m[_U(q + k)]
            a[_U(q + k)] = b + k if t else a[_U(q + k)]


@team.kernel
def _run_max(x, s, n):
    # (value, position k) of x[s:s + n]'s max by the scan's rule (the last NaN, else the first max) in passes
    # that LLVM vectorizes, where the compare-and-select scan is one dependent chain: count the NaNs, take the
    # max of the rest (team.max_of, exact without NaNs), find its first copy (a -0.0 ties a 0.0: the first)
    nans = 0
    for k in range(n):
        nans += x[_U(s + k)] != x[_U(s + k)]
    if nans:
        k = n - 1
        while x[_U(s + k)] == x[_U(s + k)]:
            k -= 1
        return x[_U(s + k)], k
    m = team.max_of(x[s:s + n], n)
    k = 0
    while x[_U(s + k)] != m:
        k += 1
    return x[_U(s + k)], k


@team.kernel
def _columns(hv, hc, hq, x, o, W, OW, kw, sw, dw, pw, low):
    # one input row, x[o:o + W]: its max over each window's columns -> hv[hq:hq + OW], the column -> hc
    # (_windows's loop on one row, its index the column)
    span = (kw - 1) * dw
    s1, s2, s3 = sw, 2 * sw, 3 * sw
    inside = min(OW, (W - 1 - span + pw) // sw + 1)
    j = 0
    while j < OW:
        w = j * sw - pw
        if sw == 1 and w >= 0 and inside - j >= 4:
            n = inside - j
            for k in range(n):
                hv[_U(hq + j + k)] = low
                hc[_U(hq + j + k)] = w + k
            _scan(hv, hc, hq + j, n, x, o, w, kw, dw)
            j = inside
        elif j + 4 <= OW and w >= 0 and w + s3 + span < W:
            m0 = m1 = m2 = m3 = low
            a0 = w
            a1, a2, a3 = a0 + s1, a0 + s2, a0 + s3
            for kc in range(kw):
                c = w + kc * dw
                v0, v1, v2, v3 = x[_U(o + c)], x[_U(o + c + s1)], x[_U(o + c + s2)], x[_U(o + c + s3)]
                if (v0 > m0) | (v0 != v0):
                    m0 = v0
                    a0 = c
                if (v1 > m1) | (v1 != v1):
                    m1 = v1
                    a1 = c + s1
                if (v2 > m2) | (v2 != v2):
                    m2 = v2
                    a2 = c + s2
                if (v3 > m3) | (v3 != v3):
                    m3 = v3
                    a3 = c + s3
            hv[_U(hq + j)] = m0
            hv[_U(hq + j + 1)] = m1
            hv[_U(hq + j + 2)] = m2
            hv[_U(hq + j + 3)] = m3
            hc[_U(hq + j)] = a0
            hc[_U(hq + j + 1)] = a1
            hc[_U(hq + j + 2)] = a2
            hc[_U(hq + j + 3)] = a3
            j += 4
        else:  # one window, its columns checked against the input's edges
            w0 = w
            while w0 < 0:
                w0 += dw
            m = low
            a = w0
            for kc in range(kw):
                c = w + kc * dw
                if c >= 0 and c < W:
                    v = x[_U(o + c)]
                    if (v > m) | (v != v):
                        m = v
                        a = c
            hv[_U(hq + j)] = m
            hc[_U(hq + j)] = a
            j += 1


@team.kernel
def _fold(y, idx, q, hv, hpos, hq, n, rW):
    # a later row's maxima hv[hq:hq + n] (their columns hpos, the row at flat rW) into y[q:q + n], idx[...]
    for j in range(n):
        v = hv[_U(hq + j)]
        a = rW + hpos[_U(hq + j)]
        m = y[_U(q + j)]
        b = idx[_U(q + j)]
        t = (v > m) | (v != v)
        y[_U(q + j)] = v if t else m
        idx[_U(q + j)] = a if t else b


@team.kernel
def _backward(gx, g, idx, lo, hi):  # planes [lo, hi) of gx (P, H W) = zeros, g (P, L) added at idx (P, L)
    HW = gx.shape[1]
    L = g.shape[1]
    for p in range(lo, hi):
        for k in range(HW):
            gx[p, k] = 0
        for o in range(L):
            a = idx[p, o]
            if a >= 0 and a < HW:
                gx[p, a] += g[p, o]


@team.kernel(parallel=True)
def _forward_team(y, idx, x, P, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, low, hv, hpos, parts):
    for p in team.prange(parts):
        lo, hi = team.share(P, p, parts, 1)
        _forward(y, idx, x, lo, hi, H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, low, hv[p], hpos[p])


@team.kernel(parallel=True)
def _backward_team(gx, g, idx, parts):
    for p in team.prange(parts):
        lo, hi = team.share(gx.shape[0], p, parts, 1)
        _backward(gx, g, idx, lo, hi)
