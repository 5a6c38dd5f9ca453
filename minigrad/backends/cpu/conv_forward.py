"""A 2-D convolution's forward on the CPU, image by image: y[n] = w (O, C * kh * kw) @ cols_n, with cols_n
(C * kh * kw, OH * OW) the image's windows as columns, made by a compiled loop straight from the unpadded
input (the padding written as zeros) into a buffer that stays in the cache, and the product written by
BLAS straight into y's (N, O, OH * OW) rows.

nn/_functional/conv.py's general path moves the batch last, pads it, makes every image's columns at
once (C * kh * kw rows of OH * OW * N: 9 times the input for a 3 x 3 kernel, 75 MB for a ResNet's
16 x 32 x 32 maps at batch 128, written to fresh pages that fault on first touch) and moves the product
batch first again. Here there are no moves, no padded copy and no large columns. Each output entry is
still one dot product over (c, i, j) summed by BLAS, as in the general path's product (its transpose):
OpenBLAS gives most shapes the same bits in either orientation, and rounds a small product's otherwise
(its small-matrix code). Taken for maps of MIN_POSITIONS output positions and more: for fewer, each image's
product is too small for BLAS to run at speed (forward 25 ms against 49 for 16 channels of 32 x 32 maps in
and out at batch 128; 0.75 against 0.51 for 8 x 8 maps). Images are independent: on the team (images cut in
shares) the bits are those of one thread.
"""
import numpy as np

from . import blas, floats, team


MIN_POSITIONS = 256


def supports(x, w, groups, out):
    """float32 / float64 numpy arrays, none empty, a 2-D kernel, one group, maps of MIN_POSITIONS output
    positions or more, and a BLAS the kernels can call."""
    return (floats(x, w) and x.ndim == 4 and w.ndim == 4 and groups == 1 and x.size and w.size
            and len(out) == 2 and out[0] * out[1] >= MIN_POSITIONS and blas.gemm_address(x.dtype) is not None)


def forward(x, w, stride, pads, dilation, out):
    """x (N, C, H, W), w (O, C, kh, kw) -> y (N, O, OH, OW)."""
    N, C = x.shape[:2]
    O, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    x = np.ascontiguousarray(x)
    wm = np.ascontiguousarray(w).reshape(O, -1)
    y = np.empty((N, O) + tuple(out), dtype=x.dtype)
    args = tuple(int(v) for v in (kh, kw, stride[0], stride[1], dilation[0], dilation[1], pads[0][0], pads[1][0],
                                  out[0], out[1]))
    L = out[0] * out[1]
    with blas.team_gemm_context(x.dtype):
        parts = _conv_team.threads() if y.size >= team.TEAM_MIN_ELEMENTS and _conv_team.on_team() else 0
        # each share's columns (made here: see max_pool.py on arrays made inside a cached kernel)
        cols = np.empty((max(parts, 1), C * kh * kw * L), dtype=x.dtype)
        if parts:
            _conv_team(y.reshape(N, -1), x, wm, cols, *args, *blas.gemm_address(x.dtype), parts)
        else:
            _conv(y.reshape(N, -1), x, wm, cols[0], 0, N, *args, *blas.gemm_address(x.dtype))
    return y


@team.kernel
def _conv(y, x, wm, cols, n0, n1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64):
    # images [n0, n1) of y (N, O * OH * OW); cols (C * kh * kw * OH * OW,): room
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    O, K = wm.shape[0], wm.shape[1]
    L = OH * OW
    one = x.dtype.type(1)
    zero = x.dtype.type(0)
    for n in range(n0, n1):
        row = 0
        for c in range(C):
            for i in range(kh):
                for j in range(kw):
                    # cols[(c, i, j), (p, q)] = x[n, c, p*sh + i*dh - ph, q*sw + j*dw - pw], 0 off the image
                    for p in range(OH):
                        r = p * sh + i * dh - ph
                        a = row * L + p * OW
                        if r < 0 or r >= H:
                            for q in range(OW):
                                cols[a + q] = zero
                            continue
                        for q in range(OW):
                            s = q * sw + j * dw - pw
                            cols[a + q] = x[n, c, r, s] if 0 <= s < W else zero
                    row += 1
        team.gemm(address, ilp64, 111, 111, O, L, K, one, wm, K, cols, L, zero, y[n], L)


@team.kernel(parallel=True)
def _conv_team(y, x, wm, cols, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64, parts):
    for t in team.prange(parts):
        lo, hi = team.share(y.shape[0], t, parts, 1)
        _conv(y, x, wm, cols[t], lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64)
