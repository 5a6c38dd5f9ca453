"""col2im of a 2-D convolution on the CPU, compiled: the adjoint of reading the input's windows as columns.

The columns are nn/_functional/conv.py's batch-last layout, (C * kh * kw, oh * ow * N): element
[(c, i, j), (p, q, n)] belongs at x_pad[n, c, p*s + i*d, q*s + j*d]. numpy's col2im is kh * kw strided
adds into a zero, padded, batch-last array, then a crop and a copy batch first. Here, channel by channel,
the adds go into a (H, W, N) buffer that stays in the cache (kernel offsets in row-major order, as
numpy's adds: the same bits, runs of N that vectorize), skipping the padding, and the buffer is written
out batch first: one pass over the columns and one over the gradient. Channels are independent: on the
team (channels cut in shares) the bits are those of one thread.
"""
import numpy as np

from . import floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)


def supports(cols, kernel):
    """float32 / float64 numpy columns of a 2-D convolution."""
    return floats(cols) and len(kernel) == 2


def _args(kernel, stride, dilation, pads, out):
    return tuple(int(v) for v in (kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
                                  pads[0][0], pads[1][0], out[0], out[1]))


def forward(cols, x_shape, kernel, stride, dilation, pads, out):
    """cols (C * kh * kw, oh * ow * N) -> the input's gradient of x_shape (N, C, H, W): col2im, cropped."""
    N, C, H, W = x_shape
    cols = np.ascontiguousarray(cols).reshape(C, kernel[0] * kernel[1], -1)
    gx = np.empty(x_shape, dtype=cols.dtype)
    args = _args(kernel, stride, dilation, pads, out)
    parts = _col2im_team.threads() if gx.size >= team.TEAM_MIN_ELEMENTS and _col2im_team.on_team() else 0
    # each share's (H, W, N) sums (made here: see max_pool.py on arrays made inside a cached kernel)
    acc = np.empty((max(parts, 1), H * W * N), dtype=cols.dtype)
    if parts:
        _col2im_team(gx, cols, *args, acc, parts)
    else:
        _col2im(gx, cols, 0, C, *args, acc[0])
    return gx


@team.kernel
def _col2im(gx, cols, c0, c1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, acc):
    # channels [c0, c1) of gx (N, C, H, W) from cols (C, kh * kw, OH * OW * N); acc (H * W * N,): room
    N, H, W = gx.shape[0], gx.shape[2], gx.shape[3]
    for c in range(c0, c1):
        for e in range(H * W * N):
            acc[e] = 0
        for i in range(kh):
            for j in range(kw):
                k = i * kw + j
                ck = cols[c, k]
                for p in range(OH):
                    r = p * sh + i * dh - ph
                    if r < 0 or r >= H:
                        continue
                    for q in range(OW):
                        col = q * sw + j * dw - pw
                        if col < 0 or col >= W:
                            continue
                        a = (r * W + col) * N
                        b = (p * OW + q) * N
                        for n in range(N):  # (unsigned offsets: no wraparound test inside, the adds vectorize)
                            acc[_U(a + n)] += ck[_U(b + n)]
        for n in range(N):
            for r in range(H):
                for col in range(W):
                    gx[n, c, r, col] = acc[(r * W + col) * N + n]


@team.kernel(parallel=True)
def _col2im_team(gx, cols, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, acc, parts):
    for t in team.prange(parts):
        lo, hi = team.share(gx.shape[1], t, parts, 1)
        _col2im(gx, cols, lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, acc[t])
