"""layer_norm as one NativeLayerNormBackward0 node, saving x_hat, 1/std and the weight."""
import numpy as np

from . import cpu_kernels, cuda_kernels
from ._common import (
    Function, Tensor, check_tensor, col_sum, for_blocks, once_differentiable, row_dot, row_sum, rows_per_block, scratch,
    xp_of,
)


# The compiled forms (cpu_kernels): each row read once into cache and finished there. Scalars come in
# the rows' precision (eps, 1/D): mixing in float64 made the loops 2.5x slower.
@cpu_kernels.kernel
def _layer_norm_rows(y, xhat, rstd, x, w, b, eps, inv_d):  # rows of x (N, D); w, b of size D, or 0 when absent
    N, D = x.shape
    zero = inv_d - inv_d
    for i in range(N):
        s = zero
        for j in range(D):
            s += x[i, j]
        mean = s * inv_d
        s = zero
        for j in range(D):
            h = x[i, j] - mean
            xhat[i, j] = h
            s += h * h
        r = (inv_d / inv_d) / np.sqrt(s * inv_d + eps)
        rstd[i, 0] = r
        if w.size and b.size:
            for j in range(D):
                h = xhat[i, j] * r
                xhat[i, j] = h
                y[i, j] = h * w[j] + b[j]
        elif w.size:
            for j in range(D):
                h = xhat[i, j] * r
                xhat[i, j] = h
                y[i, j] = h * w[j]
        else:
            for j in range(D):
                h = xhat[i, j] * r
                xhat[i, j] = h
                y[i, j] = h + b[j] if b.size else h


@cpu_kernels.kernel
def _layer_norm_rows_backward(gx, gw, gb, g, xhat, rstd, w, inv_d):  # see LayerNorm.backward; gx of size 0: not needed
    N, D = g.shape
    zero = inv_d - inv_d
    for i in range(N):
        c1 = zero  # sum(g w)
        c2 = zero  # sum(g w x_hat)
        for j in range(D):
            gj, hj = g[i, j], xhat[i, j]
            gw[j] += gj * hj
            gb[j] += gj
            if w.size:
                gj = gj * w[j]
            c1 += gj
            c2 += gj * hj
        if gx.size:
            c1 *= inv_d
            c2 *= inv_d
            r = rstd[i, 0]
            if w.size:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] * w[j] - c1 - xhat[i, j] * c2)
            else:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] - c1 - xhat[i, j] * c2)


def layer_norm_arrays(xd, wd, bd, D, eps):  # x_hat = (x - mean) / sqrt(var + eps);  y = x_hat * w + b   (rows of D)
    """LayerNorm's forward on arrays: x (..., D), w and b (D,) or None -> (y (..., D), x_hat (N, D),
    1/std (N, 1)) with N the number of rows. On the GPU, the fused kernel (docs/gpu.md), as the
    op's twin there uses it."""
    if cuda_kernels.use(xd):
        y, xhat, rstd = cuda_kernels.layer_norm_forward(xd.reshape(-1, D), wd, bd, eps)
        return y.reshape(xd.shape), xhat, rstd
    xp = xp_of(xd)
    shape = xd.shape
    x2 = xd.reshape(-1, D)
    N = x2.shape[0]
    xhat = xp.empty_like(x2)
    out_full = xp.empty(shape, dtype=xd.dtype)  # allocated in its final shape: the output owns its memory
    out = out_full.reshape(N, D)
    rstd = xp.empty((N, 1), dtype=xd.dtype)
    wd = None if wd is None else wd.reshape(D)
    bd = None if bd is None else bd.reshape(D)
    inv_d = 1.0 / D

    if cpu_kernels.use(x2):
        # contiguous rows: a strided view (the last position's row, when generating) would compile to
        # a loop that sums in another order, and give the row another rounding than the whole batch
        x2 = np.ascontiguousarray(x2)
        none, dt = x2[:0, 0], x2.dtype.type

        def rows(lo, hi):
            _layer_norm_rows(out[lo:hi], xhat[lo:hi], rstd[lo:hi], x2[lo:hi], none if wd is None else wd,
                             none if bd is None else bd, dt(eps), dt(inv_d))
    else:
        def rows(lo, hi):  # every pass on a cache-sized block of rows
            xb, hb, ob, rb = x2[lo:hi], xhat[lo:hi], out[lo:hi], rstd[lo:hi]
            mean = row_sum(xb, xp)
            mean *= inv_d
            xp.subtract(xb, mean, out=hb)  # x - mean
            rb[...] = row_dot(hb, hb, xp)
            rb *= inv_d  # var (biased)
            rb += eps
            xp.sqrt(rb, out=rb)
            xp.reciprocal(rb, out=rb)  # 1/std
            hb *= rb
            if wd is not None:
                xp.multiply(hb, wd, out=ob)
            else:
                ob[...] = hb
            if bd is not None:
                ob += bd

    for_blocks(N, rows, rows_per_block(D), xp)
    return out_full, xhat, rstd


class LayerNorm(Function):
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, D, eps):
        if cuda_kernels.use(x.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.LayerNorm.forward(ctx, x, w, b, D, eps)
        out, xhat, rstd = layer_norm_arrays(x.data, None if w is None else w.data, None if b is None else b.data, D, eps)
        ctx.save(xhat=xhat, rstd=rstd, weight=w if ctx.needs_input_grad[0] else None)
        ctx.shapes = x.data.shape, None if w is None else w.data.shape, None if b is None else b.data.shape
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if cuda_kernels.use(g.data):
            return cuda_kernels.LayerNorm.backward(ctx, g)
        # gw = sum_rows g x_hat;  gb = sum_rows g;  gx = rstd (g w - mean(g w) - x_hat mean(g w x_hat))
        xhat, rstd, w = ctx.saved_tensors
        xhat, rstd = xhat.data, rstd.data
        x_shape, w_shape, b_shape = ctx.shapes
        N, D = xhat.shape
        xp = xp_of(xhat)
        g = xp.ascontiguousarray(g.data).reshape(N, D)
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        wd = None if w is None else w.data.reshape(D)
        gx_full = xp.empty(x_shape, dtype=g.dtype) if need_x else None  # owned, so the engine adopts it uncopied
        gx = None if gx_full is None else gx_full.reshape(N, D)
        inv_d = 1.0 / D
        partial = {}  # row-block start -> (its column sums for gw, for gb), reduced in order below
        if cpu_kernels.use(g) and cpu_kernels.use(xhat):
            none = xhat[:0, 0]

            def rows(lo, hi):
                sums = np.zeros((2, D), dtype=g.dtype)  # this block's column sums for gw and gb
                _layer_norm_rows_backward(none if gx is None else gx[lo:hi], sums[0], sums[1], g[lo:hi],
                                          xhat[lo:hi], rstd[lo:hi], none if wd is None else wd, g.dtype.type(inv_d))
                partial[lo] = (sums[0], sums[1])
        else:
            def rows(lo, hi):
                gb_, hb, rb = g[lo:hi], xhat[lo:hi], rstd[lo:hi]
                t = scratch(0, gb_.size, g.dtype).reshape(gb_.shape) if xp is np else xp.empty_like(gb_)
                xp.multiply(gb_, hb, out=t)  # g x_hat
                partial[lo] = (col_sum(t, xp) if need_w else None, col_sum(gb_, xp) if need_b else None)
                if not need_x:
                    return
                if wd is None:
                    c2 = row_sum(t, xp)  # sum(g w x_hat)
                    c1 = row_sum(gb_, xp)  # sum(g w)
                    t[...] = gb_
                else:
                    c2 = _row_dot(t, wd, xp)
                    c1 = _row_dot(gb_, wd, xp)
                    xp.multiply(gb_, wd, out=t)  # g w
                c1 *= inv_d
                c2 *= -inv_d
                o = gx[lo:hi]
                xp.multiply(hb, c2, out=o)
                o += t
                o -= c1
                o *= rb

        for_blocks(N, rows, rows_per_block(D), xp)
        parts = [partial[k] for k in sorted(partial)]
        gw = sum(p[0] for p in parts) if need_w else None
        gb = sum(p[1] for p in parts) if need_b else None
        return (None if gx_full is None else Tensor(gx_full),
                None if gw is None else Tensor(gw if gw.shape == w_shape else gw.reshape(w_shape)),
                None if gb is None else Tensor(gb if gb.shape == b_shape else gb.reshape(b_shape)), None, None)


def _row_dot(a, w, xp):
    """a @ w as a column (rows, 1); einsum on numpy: no BLAS call inside the block threads."""
    return (np.einsum("ij,j->i", a, w) if xp is np else xp.matmul(a, w))[:, None]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    check_tensor(input, "input", "layer_norm")
    if isinstance(normalized_shape, (int, np.integer)):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or tuple(input.data.shape[input.data.ndim - k:]) != normalized_shape or input.data.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*, "
            f"{', '.join(map(str, normalized_shape))}], but got input of size {list(input.shape)}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.data.shape) != normalized_shape:
            raise RuntimeError(f"layer_norm: expected {name} of shape {list(normalized_shape)}, got {list(p.shape)}")
    D = 1
    for s in normalized_shape:
        D *= s
    return LayerNorm.apply(input, weight, bias, D, float(eps))
