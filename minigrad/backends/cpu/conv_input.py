"""A 2-D convolution's input gradient on the CPU: col2im(w^T g) without the columns.

nn/_functional/conv.py's general path makes the columns w^T g, (C * kh * kw, L * N), then adds them back
into the input's frame (col2im). For a CNN's middle layer those columns are the largest array of the
step (9 times the input), written by a product whose K is only O (its output channels): the product
runs at memory's speed, and col2im reads it all once more. Here, for each row r of the padded frame
and kernel offset (i, j), one BLAS call adds w_ij^T g[:, p] (C x O times O x (OW * N)) straight into the
frame's row r at column offset j * dw, the frame batch last, (C, Hp, Wp, N), as the columns' layout is:
with a stride of 1 along the width the window's columns are one run of OW * N there. The offsets reach
each element in (i, j) row-major order, as col2im's adds, and each added term is the columns' entry:
the same bits. Then the frame is cropped and moved batch first.
"""
import numpy as np

from . import blas, floats, team


def supports(g2, w, kernel, stride):
    """float32 / float64 numpy arrays, none empty (BLAS rejects a leading dimension of 0), one group (g2 (1, O,
    L * N)), a 2-D kernel with a stride of 1 along the width, and a BLAS the kernels can call."""
    return (floats(g2, w) and g2.ndim == 3 and g2.shape[0] == 1 and g2.size and w.size and len(kernel) == 2
            and stride[1] == 1 and blas.gemm_address(g2.dtype) is not None)


def forward(g2, w, x_shape, kernel, stride, dilation, pads, out):
    """g2 (1, O, OH * OW * N) (the output's gradient batch last), w (O, C, kh, kw) -> gx of x_shape (N, C, H, W)."""
    N, C, H, W = x_shape
    O = w.shape[0]
    Hp, Wp = H + pads[0][0] + pads[0][1], W + pads[1][0] + pads[1][1]
    wk = np.ascontiguousarray(w.transpose(2, 3, 0, 1)).reshape(-1, O, C)  # (kh * kw, O, C): w_ij as rows of C
    frame = np.empty(C * Hp * Wp * N, dtype=g2.dtype)  # (zeroed by the kernel: np.zeros' fresh pages fault)
    gx = np.empty(x_shape, dtype=g2.dtype)
    args = tuple(int(v) for v in (kernel[0], kernel[1], stride[0], dilation[0], dilation[1], out[0], out[1],
                                  Hp, Wp, pads[0][0], pads[1][0]))
    one = g2.dtype.type(1)
    with blas.team_gemm_context(g2.dtype):
        if gx.size >= team.TEAM_MIN_ELEMENTS and _input_grad_team.on_team():
            _input_grad_team(gx, frame, wk, g2[0].reshape(-1), *args, one, *blas.gemm_address(g2.dtype),
                             _input_grad_team.threads())
        else:
            _input_grad(gx, frame, wk, g2[0].reshape(-1), 0, C, *args, one, *blas.gemm_address(g2.dtype))
    return gx


@team.kernel
def _input_grad(gx, frame, wk, g, c0, c1, kh, kw, sh, dh, dw, OH, OW, Hp, Wp, ph, pw, one, address, ilp64):
    # channels [c0, c1) of gx (N, C, H, W); frame (C * Hp * Wp * N,): room, g (O * OH * OW * N,)
    N, C, H, W = gx.shape
    O = wk.shape[1]
    plane, run = Hp * Wp * N, OW * N
    for e in range(c0 * plane, c1 * plane):
        frame[e] = 0
    for r in range(Hp):  # a frame row at a time: its C rows stay in the cache through its kh * kw adds
        for i in range(kh):
            t = r - i * dh
            if t < 0 or t % sh != 0 or t // sh >= OH:
                continue
            p = t // sh
            for j in range(kw):
                # frame[c, r, j * dw + q, n] += sum_o w[o, c, i, j] g[o, p, q, n]
                team.gemm(address, ilp64, 112, 111, c1 - c0, run, O, one, wk[i * kw + j, 0, c0:], C,
                          g[p * run:], OH * run, one, frame[c0 * plane + (r * Wp + j * dw) * N:], plane)
    for c in range(c0, c1):  # the crop, moved batch first (a channel's plane stays in the cache across n)
        for n in range(N):
            for rr in range(H):
                a = c * plane + ((rr + ph) * Wp + pw) * N + n
                for s in range(W):
                    gx[n, c, rr, s] = frame[a + s * N]


@team.kernel(parallel=True)
def _input_grad_team(gx, frame, wk, g, kh, kw, sh, dh, dw, OH, OW, Hp, Wp, ph, pw, one, address, ilp64, parts):
    for t in team.prange(parts):
        lo, hi = team.share(gx.shape[1], t, parts, 1)
        _input_grad(gx, frame, wk, g, lo, hi, kh, kw, sh, dh, dw, OH, OW, Hp, Wp, ph, pw, one, address, ilp64)
