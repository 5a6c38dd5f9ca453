"""A 2-D convolution's input gradient on the CPU, image by image: col2im(w^T g[n]) without the batch's columns.

nn/_functional/conv.py's general path moves g batch last, makes the columns w^T g, (C * kh * kw, L * N), for
the whole batch (9 times the input for a 3 x 3 kernel, written by a product whose K is only O, at memory's
speed), then adds them back into the input's padded frame (col2im), crops it and moves it batch first. Here,
for each image, a band of output rows at a time, BLAS writes that band's columns w^T g[n][:, band] (C * kh *
kw, band * OW) into a buffer that stays in the cache, and a compiled loop adds them straight into gx[n]
(batch first, unpadded: the terms off the image are skipped) through unsigned offsets, so the adds vectorize.
No moves, no frame, no crop, any stride and dilation.

The same sums as col2im, in its order: each column entry is a dot product over O, and each element of gx gets
its terms in (i, j) row-major order, col2im's: within a band the loops run over (i, j) in that order, and the
bands run from the last rows to the first, since an element's term from a larger i comes from an earlier
output row. (BLAS may round a band's product, of another size than col2im's, differently in the last bit:
the values are col2im's at float rounding, tested.) One band would not do: MNIST's conv2's columns (288 x
576, 0.66 MB) spill out of the L2 cache. Images are independent: on the team (images cut in shares) the
bits are those of one thread.
"""
import numpy as np

from . import blas, floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)
BAND_BYTES = 1 << 17  # a band's columns, to stay in the L2 cache
BAND_POSITIONS = 256  # but at least this many output positions per product, for BLAS to run at speed
MIN_POSITIONS = 64


def supports(g, w, groups, kernel):
    """float32 / float64 numpy arrays, none empty (BLAS rejects a leading dimension of 0), g (N, O, OH, OW) of
    MIN_POSITIONS output positions or more, one group, a 2-D kernel, and a BLAS the kernels can call. (Fewer: each
    image's product is too small for BLAS, and col2im's one product over the batch is the faster, as for
    DCGAN's first ConvTranspose2d from 1 x 1 noise: docs/performance.md.)"""
    return (floats(g, w) and g.ndim == 4 and groups == 1 and g.size and w.size and len(kernel) == 2
            and g.shape[2] * g.shape[3] >= MIN_POSITIONS and blas.gemm_address(g.dtype) is not None)


def forward(g, w, x_shape, kernel, stride, dilation, pads, out):
    """g (N, O, OH, OW) (the output's gradient), w (O, C, kh, kw) -> gx of x_shape (N, C, H, W)."""
    N = x_shape[0]
    O = w.shape[0]
    wm = np.ascontiguousarray(w).reshape(O, -1)
    g = np.ascontiguousarray(g).reshape(N, -1)
    gx = np.empty(x_shape, dtype=g.dtype)
    band = min(out[0], max(BAND_BYTES // (wm.shape[1] * out[1] * g.itemsize), -(-BAND_POSITIONS // out[1])))
    args = tuple(int(v) for v in (kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1], pads[0][0],
                                  pads[1][0], out[0], out[1], band))
    with blas.team_gemm_context(g.dtype):
        parts = _input_grad_team.threads() if gx.size >= team.TEAM_MIN_ELEMENTS and _input_grad_team.on_team() else 0
        # each share's columns (made here: see max_pool.py on arrays made inside a cached kernel)
        cols = np.empty((max(parts, 1), wm.shape[1] * band * out[1]), dtype=g.dtype)
        if parts:
            _input_grad_team(gx, cols, wm, g, *args, *blas.gemm_address(g.dtype), parts)
        else:
            _input_grad(gx, cols[0], wm, g, 0, N, *args, *blas.gemm_address(g.dtype))
    return gx


@team.kernel
def _input_grad(gx, cols, wm, g, n0, n1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address, ilp64):
    # images [n0, n1) of gx (N, C, H, W); wm (O, C * kh * kw); g (N, O * OH * OW); cols (C * kh * kw * band * OW,)
    C, H, W = gx.shape[1], gx.shape[2], gx.shape[3]
    O, K = wm.shape[0], wm.shape[1]
    one, zero = g.dtype.type(1), g.dtype.type(0)
    gf = gx.reshape(-1)
    for n in range(n0, n1):
        for e in range(n * C * H * W, (n + 1) * C * H * W):
            gf[e] = zero
        for p1 in range(OH, 0, -band):  # (the last rows first: each element's terms in (i, j) order)
            p0 = max(p1 - band, 0)
            m = (p1 - p0) * OW
            # cols (K, m) = wm^T g[n][:, p0 * OW:p1 * OW]
            team.gemm(address, ilp64, 112, 111, K, m, O, one, wm, K, g[n, p0 * OW:], OH * OW, zero, cols, m)
            row = 0
            for c in range(C):
                for i in range(kh):
                    for j in range(kw):
                        # the window positions q whose column j * dw - pw + q * sw lies on the image: [q0, q1)
                        off = j * dw - pw
                        q0 = min(max((-off + sw - 1) // sw, 0), OW)
                        q1 = max(min((W - off + sw - 1) // sw, OW), q0)
                        for p in range(p0, p1):
                            r = p * sh + i * dh - ph
                            if r < 0 or r >= H:
                                continue
                            dst = ((n * C + c) * H + r) * W + off
                            a = row * m + (p - p0) * OW
                            for q in range(q0, q1):
                                gf[_U(dst + q * sw)] += cols[_U(a + q)]
                        row += 1


@team.kernel(parallel=True)
def _input_grad_team(gx, cols, wm, g, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address, ilp64, parts):
    for t in team.prange(parts):
        lo, hi = team.share(gx.shape[0], t, parts, 1)
        _input_grad(gx, cols[t], wm, g, lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address, ilp64)
