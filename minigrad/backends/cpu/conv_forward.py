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
and out at batch 128; 0.75 against 0.51 for 8 x 8 maps). A strided conv's batch-wide columns gather every
s-th input element, a copy as slow as its product on small maps: from STRIDED_MIN_POSITIONS positions (8 x 8)
its forward and weight gradient are the faster image by image (not for a 4 x 4 map, nor a stride-1 weight
gradient). Images are independent: on the team (images cut in shares) the bits are those of one thread.

At stride 1 the forward makes its columns over the padded width instead: the image padded once into a small
buffer, each column row (c, i, j) is then one run of the padded image, OH * Wp long, where the plain columns
are OH runs of OW and their zeros; the product has Wp - OW extra positions per row, dropped as it is copied
into y with the bias. On small maps the runs' overhead, not the product, was the columns' cost: 16 channels of
8 x 8 maps at batch 128, 0.66 ms against 1.26 plain (1.25 for the general path, PyTorch 0.71; one thread), so
taken there from WIDE_MIN_POSITIONS positions. (Blocks of several small images side by side in one product
were slower than either, image by image: the product was not the cost.) Each entry the same dot product.

`backward` is the weight's gradient the same way: gw^T = sum over images of cols_n g[n]^T (O, OH * OW), one
product per image added into its block's sum (BLAS's beta), blocks of CHUNK images, whose sums are then
added in order. Another order of the sums than the general path's one product over all positions and images
(the same values at float32's rounding, tested against it and PyTorch), fixed: the blocks do not depend on
the number of threads, which share them out (30 ms against 51 for the map above).
"""
import numpy as np

from . import blas, floats, team

_U = np.uint64  # (an unsigned index: numba adds no wraparound for negative indices)

MIN_POSITIONS = 256
ROW_MIN_POSITIONS = 12  # (shorter rows: the general path's one product over the batch is the faster)
WIDE_MIN_POSITIONS = 64  # (4 x 4 maps: the general path's batch-last columns the faster)
STRIDED_MIN_POSITIONS = 64  # (7 x 7 maps: even with the general path's)
BAND_BYTES = 1 << 17  # the forward's columns made a band of output rows at a time, to stay in the L2 cache
BAND_POSITIONS = 512  # but at least this many output positions per product, for BLAS to run at speed
CHUNK = 8  # images whose weight-gradient terms one product after another sums, before the blocks are added


def supports(x, w, groups, kernel, out, stride=None, forward=True):
    """float32 / float64 numpy arrays, none empty, a 2-D kernel, one group, maps of MIN_POSITIONS output
    positions or more, a single row (a Conv1d's, nn/_functional/conv.py: each column row one run of the
    input's row, the general path batches none of it), a stride other than 1 on maps of STRIDED_MIN_POSITIONS
    and more, or for the forward (`forward`) at stride 1 maps of WIDE_MIN_POSITIONS and more (its columns over
    the padded width, a run per row of the kernel), and a BLAS the kernels can call. `stride`: None where not
    known. (Whatever the columns' size: since the columns are copied through unsigned offsets, the general
    path's batch-last columns were nowhere the faster for those, forward or weight gradient:
    docs/performance.md.)"""
    positions = out[0] * out[1] if len(out) == 2 else 0
    strided = stride is not None and tuple(stride) != (1, 1)
    wide = forward and stride is not None and not strided and positions >= WIDE_MIN_POSITIONS
    # a Conv1d's single row (not a 2-d conv down to one row) of ROW_MIN_POSITIONS or more
    one_row = out[0] == 1 and kernel[0] == 1 and x.shape[2] == 1 and out[1] >= ROW_MIN_POSITIONS
    return (floats(x, w) and x.ndim == 4 and groups == 1 and x.size and w.size and len(out) == 2
            and (positions >= MIN_POSITIONS or one_row or wide or (strided and positions >= STRIDED_MIN_POSITIONS))
            and blas.gemm_address(x.dtype) is not None)


def _args(kernel, stride, dilation, pads, out):
    return tuple(int(v) for v in (kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1], pads[0][0],
                                  pads[1][0], out[0], out[1]))


def forward(x, w, stride, pads, dilation, out, bias=None):
    """x (N, C, H, W), w (O, C, kh, kw), bias (O,) or None -> y (N, O, OH, OW)."""
    N, C = x.shape[:2]
    O, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    x = np.ascontiguousarray(x)
    wm = np.ascontiguousarray(w).reshape(O, -1)
    b = np.zeros(0, dtype=x.dtype) if bias is None else np.ascontiguousarray(bias)
    y = np.empty((N, O) + tuple(out), dtype=x.dtype)
    args = _args((kh, kw), stride, dilation, pads, out)
    K = C * kh * kw
    wide = stride[0] == 1 and stride[1] == 1
    Wr = out[1] + (kw - 1) * dilation[1] if wide else out[1]  # a column row's positions per output row
    band = min(out[0], max(BAND_BYTES // (K * Wr * x.itemsize), -(-BAND_POSITIONS // Wr)))
    with blas.team_gemm_context(x.dtype):
        parts = _conv_team.threads() if y.size >= team.TEAM_MIN_ELEMENTS and _conv_team.on_team() else 0
        # each share's columns, product and padded image (made here: see max_pool.py on arrays made inside a cached
        # kernel; the padded image's tail stays zero)
        shares = max(parts, 1)
        cols = np.empty((shares, K * band * Wr), dtype=x.dtype)
        prod = np.empty((shares, O * band * Wr if wide else 0), dtype=x.dtype)
        xp = np.zeros((shares, C * (out[0] + (kh - 1) * dilation[0]) * Wr + (kw - 1) * dilation[1] if wide else 0),
                      dtype=x.dtype)
        if parts:
            _conv_team(y.reshape(N, -1), x, wm, b, cols, prod, xp, *args, band, *blas.gemm_address(x.dtype), parts)
        else:
            _conv(y.reshape(N, -1), x, wm, b, cols[0], prod[0], xp[0], 0, N, *args, band, *blas.gemm_address(x.dtype))
    return y


@team.kernel
def _columns(cols, x, n, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, p0, p1):
    # cols (C * kh * kw * (p1 - p0) * OW,) <- image n's columns of output rows [p0, p1): [(c, i, j), (p - p0, q)] =
    # x[n, c, p*sh + i*dh - ph, q*sw + j*dw - pw], 0 off the image
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    L = (p1 - p0) * OW
    zero = x.dtype.type(0)
    xf = x.reshape(-1)
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
                    a = row * L + (p - p0) * OW
                    if r < 0 or r >= H:
                        for q in range(OW):
                            cols[a + q] = zero
                        continue
                    for q in range(q0):
                        cols[a + q] = zero
                    # (unsigned offsets: no wraparound test for a negative index inside, so the copy vectorizes;
                    # with it, at a stride of 1, making the columns took 4 times the product's time)
                    src = ((n * C + c) * H + r) * W + off
                    for q in range(q0, q1):
                        cols[_U(a + q)] = xf[_U(src + q * sw)]
                    for q in range(q1, OW):
                        cols[a + q] = zero
                row += 1


@team.kernel
def _pad(xp, x, n, ph, pw, Hp, Wp):
    # xp (C * Hp * Wp + tail,) <- image n zero-padded to Hp x Wp, ph rows above and pw columns left (the tail,
    # zeros, only read for positions that are dropped)
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    zero = x.dtype.type(0)
    xf = x.reshape(-1)
    for c in range(C):
        for r in range(Hp):
            a = (c * Hp + r) * Wp
            xr = r - ph
            if xr < 0 or xr >= H:
                for q in range(Wp):
                    xp[a + q] = zero
                continue
            for q in range(pw):
                xp[a + q] = zero
            src = ((n * C + c) * H + xr) * W
            for q in range(W):
                xp[_U(a + pw + q)] = xf[_U(src + q)]
            for q in range(pw + W, Wp):
                xp[a + q] = zero


@team.kernel
def _wide_columns(cols, xp, C, kh, kw, dh, dw, Hp, Wp, p0, p1):
    # at stride 1, the columns over the padded width: [(c, i, j), (p - p0) * Wp + q] = xp[c, p + i*dh, q + j*dw]
    # for q in [0, Wp), one run of (p1 - p0) * Wp per row instead of p1 - p0 runs of OW and their zeros (on
    # small maps, the runs' overhead was the columns' cost); the Wp - OW extra positions are dropped
    m = (p1 - p0) * Wp
    row = 0
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                src = (c * Hp + p0 + i * dh) * Wp + j * dw
                a = row * m
                for t in range(m):
                    cols[_U(a + t)] = xp[_U(src + t)]
                row += 1


@team.kernel
def _conv(y, x, wm, b, cols, prod, xp, n0, n1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address, ilp64):
    # images [n0, n1) of y (N, O * OH * OW), bands of `band` output rows. xp not empty (stride 1): the columns over
    # the padded width (_wide_columns), xp the padded image, the product into prod and its OW of every Wp
    # positions copied into y; else the plain columns, the product straight into y. b (O,): the bias added while
    # the band is in the cache, or empty. cols, prod, xp: room
    O, K = wm.shape[0], wm.shape[1]
    L = OH * OW
    wide = len(xp) > 0
    Wr = OW + (kw - 1) * dw if wide else OW  # a column row's positions per output row
    one, zero = x.dtype.type(1), x.dtype.type(0)
    for n in range(n0, n1):
        if wide:
            _pad(xp, x, n, ph, pw, OH + (kh - 1) * dh, Wr)
        for p0 in range(0, OH, band):
            p1 = min(p0 + band, OH)
            m = (p1 - p0) * Wr
            if not wide:
                _columns(cols, x, n, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, p0, p1)
                team.gemm(address, ilp64, 111, 111, O, m, K, one, wm, K, cols, m, zero, y[n, p0 * OW:], L)
                if len(b):
                    for o in range(O):
                        for e in range(o * L + p0 * OW, o * L + p1 * OW):
                            y[n, _U(e)] += b[o]
                continue
            _wide_columns(cols, xp, x.shape[1], kh, kw, dh, dw, OH + (kh - 1) * dh, Wr, p0, p1)
            team.gemm(address, ilp64, 111, 111, O, m, K, one, wm, K, cols, m, zero, prod, m)
            for o in range(O):
                for p in range(p0, p1):
                    src = o * m + (p - p0) * Wr
                    dst = o * L + p * OW
                    if len(b):
                        for q in range(OW):
                            y[n, _U(dst + q)] = prod[_U(src + q)] + b[o]
                    else:  # (no + 0.0, which would turn a -0.0 into 0.0)
                        for q in range(OW):
                            y[n, _U(dst + q)] = prod[_U(src + q)]


@team.kernel(parallel=True)
def _conv_team(y, x, wm, b, cols, prod, xp, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address, ilp64, parts):
    for t in team.prange(parts):
        lo, hi = team.share(y.shape[0], t, parts, 1)
        _conv(y, x, wm, b, cols[t], prod[t], xp[t], lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, band, address,
              ilp64)


@team.kernel
def _weight_grad(part, x, g, cols, b0, b1, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64):
    # blocks [b0, b1) of CHUNK images: part[b] (K, O) = sum over the block's images n, in order, of cols_n (K, L)
    # g[n]^T, gw^T (for OpenBLAS the faster orientation: 288 x 64 ran in 0.8 of the time of 64 x 288, mnist's
    # conv2); cols (K * L,): room
    N, K, O = x.shape[0], part.shape[1], part.shape[2]
    L = OH * OW
    for b in range(b0, b1):
        for n in range(b * CHUNK, min(b * CHUNK + CHUNK, N)):
            _columns(cols, x, n, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, 0, OH)
            beta = x.dtype.type(0) if n == b * CHUNK else x.dtype.type(1)
            team.gemm(address, ilp64, 111, 112, K, O, L, x.dtype.type(1), cols, L, g[n], L, beta, part[b], O)


@team.kernel(parallel=True)
def _weight_grad_team(part, x, g, cols, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64, parts):
    for t in team.prange(parts):
        lo, hi = team.share(part.shape[0], t, parts, 1)
        _weight_grad(part, x, g, cols[t], lo, hi, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW, address, ilp64)


def backward(x, g, kernel, stride, pads, dilation):
    """The weight's gradient: x (N, C, H, W), g (N, O, OH, OW) the output's -> gw (O, C, kh, kw)."""
    N, C = x.shape[:2]
    O, out = g.shape[1], g.shape[2:]
    K, L = C * kernel[0] * kernel[1], out[0] * out[1]
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g).reshape(N, O, L)
    part = np.empty(((N + CHUNK - 1) // CHUNK, K, O), dtype=x.dtype)
    args = _args(kernel, stride, dilation, pads, out)
    with blas.team_gemm_context(x.dtype):
        parts = min(_weight_grad_team.threads(), len(part)) if x.size >= team.TEAM_MIN_ELEMENTS and \
            _weight_grad_team.on_team() else 0
        cols = np.empty((max(parts, 1), K * L), dtype=x.dtype)
        if parts:
            _weight_grad_team(part, x, g, cols, *args, *blas.gemm_address(x.dtype), parts)
        else:
            _weight_grad(part, x, g, cols[0], 0, len(part), *args, *blas.gemm_address(x.dtype))
    gw = part[0]
    for b in range(1, len(part)):  # (the blocks' sums added in order: the same bits on any number of threads)
        gw += part[b]
    return np.ascontiguousarray(gw.T).reshape((O, C) + tuple(kernel))
