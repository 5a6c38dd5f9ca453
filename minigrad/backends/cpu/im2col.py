"""im2col of a 2-D convolution on the CPU, compiled: the input's windows as columns, batch last.

The columns are nn/_functional/conv.py's batch-last layout, (C * kh * kw, oh * ow * N): element
[(c, i, j), (p, q, n)] = x_pad[n, c, p*s + i*d, q*s + j*d]. numpy's im2col first moves the whole input
batch last into a fresh zero-padded array (one copy, then another into the padding's frame), then copies
the strided windows of that array. Here, channel by channel, the image's channel is moved batch last
into a padded (Hp, Wp, N) buffer that stays in the cache (its frame zero once, for the whole call), and
each column row is written from it in runs of N: one pass over the input and one over the columns. A
copy: the same bits as numpy's. Channels are independent: on the team (channels cut in shares) the bits
are those of one thread.
"""
import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)


def supports(x, kernel):
    """float32 / float64 numpy inputs (N, C, H, W) of a 2-D convolution, none empty."""
    return floats(x) and x.ndim == 4 and len(kernel) == 2 and x.size > 0


def forward(x, pads, kernel, stride, dilation, out):
    """x (N, C, H, W), pads ((top, bottom), (left, right)) -> columns (C * kh * kw, oh * ow * N)."""
    N, C, H, W = x.shape
    x = np.ascontiguousarray(x)
    cols = np.empty((C * kernel[0] * kernel[1], out[0] * out[1] * N), dtype=x.dtype)
    args = tuple(int(v) for v in (kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
                                  pads[0][0], pads[1][0], out[0], out[1]))
    Hp, Wp = H + pads[0][0] + pads[0][1], W + pads[1][0] + pads[1][1]
    parts = _im2col_team.threads() if cols.size >= team.TEAM_MIN_ELEMENTS and _im2col_team.on_team() else 0
    # each share's padded channel (made here: see max_pool.py on arrays made inside a cached kernel)
    buf = np.zeros((max(parts, 1), Hp * Wp * N), dtype=x.dtype)
    if parts:
        _im2col_team(cols, x, *args, Wp, buf, parts)
    else:
        _im2col(cols, x, 0, C, *args, Wp, buf[0])
    return cols


@team.kernel
def _im2col(cols, x, c0, c1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, Wp, buf):
    # rows of channels [c0, c1) of cols (C * kh * kw, OH * OW * N) from x (N, C, H, W); buf (Hp * Wp * N,): zeros
    N, C, H, W = x.shape
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    m = cols.shape[1]
    for c in range(c0, c1):
        for n in range(N):  # (the frame around the image stays zero)
            for h in range(H):
                src = ((n * C + c) * H + h) * W
                dst = ((h + ph) * Wp + pw) * N + n
                for w in range(W):
                    buf[_U(dst + w * N)] = xf[_U(src + w)]
        for i in range(kh):
            for j in range(kw):
                a = (c * kh * kw + i * kw + j) * m
                for p in range(OH):
                    for q in range(OW):
                        src = ((p * sh + i * dh) * Wp + q * sw + j * dw) * N
                        for n in range(N):
                            cf[_U(a + n)] = buf[_U(src + n)]
                        a += N


@team.kernel(parallel=True)
def _im2col_team(cols, x, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, Wp, buf, parts):
    for t in team.prange(parts):
        lo, hi = team.share(x.shape[1], t, parts, 1)
        _im2col(cols, x, lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, Wp, buf[t])
