"""layer_norm as one NativeLayerNormBackward0 node, saving the input, its mean and 1/std per row, and
the weight (PyTorch's saved set: x_hat is recomputed in backward, so the forward writes one array)."""
import numpy as np

from . import cpu_kernels, cuda_kernels
from ._common import (
    TEAM_MIN_ELEMENTS, Function, Tensor, check_tensor, col_sum, for_blocks, once_differentiable, row_dot, row_sum,
    rows_per_block, scratch_like, xp_of,
)


# The compiled forms (cpu_kernels): each row read once into cache and finished there. Scalars come in
# the rows' precision (eps, 1/D): mixing in float64 made the loops 2.5x slower.
@cpu_kernels.kernel
def _layer_norm_rows(y, mean, rstd, x, w, b, eps, inv_d):  # rows of x (N, D); w, b of size D, or 0 when absent
    N, D = x.shape
    zero = inv_d - inv_d
    for i in range(N):
        s = zero
        for j in range(D):
            s += x[i, j]
        m = s * inv_d
        s = zero
        for j in range(D):
            h = x[i, j] - m
            s += h * h
        r = (inv_d / inv_d) / np.sqrt(s * inv_d + eps)
        mean[i, 0] = m
        rstd[i, 0] = r
        if w.size and b.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r * w[j] + b[j]
        elif w.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r * w[j]
        elif b.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r + b[j]
        else:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r


@cpu_kernels.kernel
def _layer_norm_rows_backward(gx, gw, gb, g, x, mean, rstd, w, inv_d):  # see LayerNorm.backward; gx of size 0: not needed
    N, D = g.shape
    zero = inv_d - inv_d
    for i in range(N):
        m, r = mean[i, 0], rstd[i, 0]
        c1 = zero  # sum(g w)
        c2 = zero  # sum(g w x_hat)
        for j in range(D):
            gj, hj = g[i, j], (x[i, j] - m) * r
            gw[j] += gj * hj
            gb[j] += gj
            if w.size:
                gj = gj * w[j]
            c1 += gj
            c2 += gj * hj
        if gx.size:
            c1 *= inv_d
            c2 *= inv_d
            if w.size:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] * w[j] - c1 - (x[i, j] - m) * r * c2)
            else:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] - c1 - (x[i, j] - m) * r * c2)


# The same two on the kernels' thread team (cpu_kernels): rows are independent, so any cut gives the
# same bits; backward's weight and bias sums are kept per chunk of CHUNK_ELEMENTS and added up in chunk
# order after, the same bits on any number of threads.
CHUNK_ELEMENTS = 1 << 14


@cpu_kernels.kernel(parallel=True)
def _layer_norm_rows_team(y, mean, rstd, x, w, b, eps, inv_d, parts):
    N = x.shape[0]
    for p in cpu_kernels.prange(parts):
        lo, hi = cpu_kernels.share(N, p, parts, 1)
        _layer_norm_rows(y[lo:hi], mean[lo:hi], rstd[lo:hi], x[lo:hi], w, b, eps, inv_d)


@cpu_kernels.kernel(parallel=True)
def _layer_norm_rows_backward_team(gx, partial, g, x, mean, rstd, w, inv_d, chunk, parts):
    N, n = g.shape[0], partial.shape[0]  # partial (chunks, 2, D): each chunk's gw and gb sums
    for p in cpu_kernels.prange(parts):
        c0, c1 = cpu_kernels.share(n, p, parts, 1)
        for c in range(c0, c1):
            lo, hi = c * chunk, min(N, c * chunk + chunk)
            _layer_norm_rows_backward(gx[lo:hi], partial[c, 0], partial[c, 1], g[lo:hi], x[lo:hi], mean[lo:hi],
                                      rstd[lo:hi], w, inv_d)


def _forward_rows(xd, wd, bd, D, eps):  # x_hat = (x - mean) / sqrt(var + eps);  y = x_hat * w + b   (rows of D)
    """x (..., D), w and b (D,) or None -> (y (..., D), mean (N, 1), 1/std (N, 1)), N rows: the compiled
    kernel on the CPU, else numpy (or, with the GPU kernels off, cupy) passes."""
    xp = xp_of(xd)
    shape = xd.shape
    # contiguous rows: a strided view (the last position's row, when generating) would compile to a
    # loop that sums in another order, and give the row another rounding than the whole batch
    x2 = xp.ascontiguousarray(xd).reshape(-1, D)
    N = x2.shape[0]
    out_full = xp.empty(shape, dtype=xd.dtype)  # allocated in its final shape: the output owns its memory
    out = out_full.reshape(N, D)
    mean, rstd = xp.empty((N, 1), dtype=xd.dtype), xp.empty((N, 1), dtype=xd.dtype)
    wd = None if wd is None else wd.reshape(D)
    bd = None if bd is None else bd.reshape(D)
    inv_d = 1.0 / D
    if cpu_kernels.use(x2):
        none, dt = x2[:0, 0], x2.dtype.type
        w_, b_ = none if wd is None else wd, none if bd is None else bd
        if x2.size >= TEAM_MIN_ELEMENTS and _layer_norm_rows_team.on_team():
            _layer_norm_rows_team(out, mean, rstd, x2, w_, b_, dt(eps), dt(inv_d), _layer_norm_rows_team.threads())
            return out_full, mean, rstd

        def rows(lo, hi):
            _layer_norm_rows(out[lo:hi], mean[lo:hi], rstd[lo:hi], x2[lo:hi], w_, b_, dt(eps), dt(inv_d))
    else:
        def rows(lo, hi):  # every pass on a cache-sized block of rows
            xb, ob, mb, rb = x2[lo:hi], out[lo:hi], mean[lo:hi], rstd[lo:hi]
            mb[...] = row_sum(xb, xp)
            mb *= inv_d
            xp.subtract(xb, mb, out=ob)  # x - mean
            rb[...] = row_dot(ob, ob, xp)
            rb *= inv_d  # var (biased)
            rb += eps
            xp.sqrt(rb, out=rb)
            xp.reciprocal(rb, out=rb)  # 1/std
            ob *= rb
            if wd is not None:
                ob *= wd
            if bd is not None:
                ob += bd

    for_blocks(N, rows, rows_per_block(D), xp)
    return out_full, mean, rstd


def layer_norm_arrays(xd, wd, bd, D, eps):
    """LayerNorm's forward on arrays (no graph: generation): x (..., D), w and b (D,) or None -> y
    (..., D). On the GPU, the fused kernel (docs/gpu.md), as the op's twin there uses it."""
    if cuda_kernels.use(xd):
        return cuda_kernels.layer_norm_forward(xd.reshape(-1, D), wd, bd, eps)[0].reshape(xd.shape)
    return _forward_rows(xd, wd, bd, D, eps)[0]


class LayerNorm(Function):
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, D, eps):
        if cuda_kernels.use(x.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.LayerNorm.forward(ctx, x, w, b, D, eps)
        out, mean, rstd = _forward_rows(x.data, None if w is None else w.data, None if b is None else b.data, D, eps)
        # the input itself, not a normalized copy: it is alive anyway (the residual stream), and
        # backward recomputes x_hat from it row by row in cache
        ctx.save(input=x, mean=mean, rstd=rstd, weight=w if ctx.needs_input_grad[0] else None)
        ctx.shapes = D, None if w is None else w.data.shape, None if b is None else b.data.shape
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if cuda_kernels.use(g.data):
            return cuda_kernels.LayerNorm.backward(ctx, g)
        # x_hat = (x - mean) rstd;  gw = sum_rows g x_hat;  gb = sum_rows g;
        # gx = rstd (g w - mean(g w) - x_hat mean(g w x_hat))
        x, mean, rstd, w = ctx.saved_tensors
        xd, mean, rstd = x.data, mean.data, rstd.data
        D, w_shape, b_shape = ctx.shapes
        N = mean.shape[0]
        xp = xp_of(xd)
        x2 = xp.ascontiguousarray(xd).reshape(N, D)
        g2 = xp.ascontiguousarray(g.data).reshape(N, D)
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        wd = None if w is None else w.data.reshape(D)
        gx_full = xp.empty(xd.shape, dtype=g2.dtype) if need_x else None  # owned: the engine adopts it uncopied
        gx = None if gx_full is None else gx_full.reshape(N, D)
        inv_d = 1.0 / D
        compiled = cpu_kernels.use(g2) and cpu_kernels.use(x2)
        if compiled and g2.size >= TEAM_MIN_ELEMENTS and _layer_norm_rows_backward_team.on_team():
            chunk = max(1, CHUNK_ELEMENTS // D)
            partial = xp.zeros((-(-N // chunk), 2, D), dtype=g2.dtype)
            _layer_norm_rows_backward_team(x2[:0] if gx is None else gx, partial, g2, x2, mean, rstd,
                                           x2[:0, 0] if wd is None else wd, g2.dtype.type(inv_d), chunk,
                                           _layer_norm_rows_backward_team.threads())
            return _layer_norm_grads(gx_full, partial.sum(axis=0), need_w, need_b, w_shape, b_shape)
        if compiled:
            dt = g2.dtype.type
            # stand-ins of the right dimensions for what is not there: no gx (2-D), no weight (1-D)
            gx_, w_ = x2[:0] if gx is None else gx, x2[:0, 0] if wd is None else wd

            def rows(lo, hi, sums):  # sums (2, D): this block's column sums for gw and gb, added to
                _layer_norm_rows_backward(gx_[lo:hi], sums[0], sums[1], g2[lo:hi], x2[lo:hi], mean[lo:hi],
                                          rstd[lo:hi], w_, dt(inv_d))
        else:
            def rows(lo, hi, sums):
                gb_, xb = g2[lo:hi], x2[lo:hi]
                h = scratch_like(0, gb_.shape, g2.dtype, xp)
                xp.subtract(xb, mean[lo:hi], out=h)
                h *= rstd[lo:hi]  # x_hat
                t = scratch_like(1, gb_.shape, g2.dtype, xp)
                xp.multiply(gb_, h, out=t)  # g x_hat
                sums[0] += col_sum(t, xp)
                sums[1] += col_sum(gb_, xp)
                if gx is None:
                    return
                if wd is None:
                    c2 = row_sum(t, xp)  # sum(g w x_hat)
                    c1 = row_sum(gb_, xp)  # sum(g w)
                    t[...] = gb_
                else:
                    c2 = row_dot(t, wd, xp)  # sum(g w x_hat)
                    c1 = row_dot(gb_, wd, xp)  # sum(g w)
                    xp.multiply(gb_, wd, out=t)  # g w
                c1 *= inv_d
                c2 *= -inv_d
                o = gx[lo:hi]
                xp.multiply(h, c2, out=o)
                o += t
                o -= c1
                o *= rstd[lo:hi]

        # each block's own sums, added up in block order after: the same bits on any thread count
        block = rows_per_block(D)
        partial = xp.zeros((max(1, -(-N // block)), 2, D), dtype=g2.dtype)

        def blocks(i0, i1):  # blocks i0:i1, whole: a thread's range is cut between blocks, never in one
            for i in range(i0, i1):
                rows(i * block, min(N, (i + 1) * block), partial[i])

        for_blocks(len(partial), blocks, 1, xp)
        sums = partial[0]
        for p in partial[1:]:
            sums += p
        return _layer_norm_grads(gx_full, sums, need_w, need_b, w_shape, b_shape)


def _layer_norm_grads(gx, sums, need_w, need_b, w_shape, b_shape):
    """backward's return: gx, and the weight's and bias's gradients from their sums (2, D)."""
    gw = (sums[0] if sums[0].shape == w_shape else sums[0].reshape(w_shape)) if need_w else None
    gb = (sums[1] if sums[1].shape == b_shape else sums[1].reshape(b_shape)) if need_b else None
    return (None if gx is None else Tensor(gx), None if gw is None else Tensor(gw),
            None if gb is None else Tensor(gb), None, None)


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


# ---- batch_norm: one NativeBatchNormBackward0 node; statistics per channel (dim 1) over every other dim -----
class BatchNorm(Function):
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, running_mean, running_var, training, momentum, eps):
        # training: batch statistics (the running ones move toward them); eval: the running statistics
        xd = x.data
        xp = xp_of(xd)
        axes = (0,) + tuple(range(2, xd.ndim))
        bshape = (1, -1) + (1,) * (xd.ndim - 2)
        if training:
            mean = xd.mean(axis=axes)
            var = xd.var(axis=axes)  # biased: what normalizes
            if running_mean is not None:  # PyTorch's update: the unbiased variance goes into running_var
                n = xd.size // xd.shape[1]
                running_mean.data[...] = (1.0 - momentum) * running_mean.data + momentum * mean
                running_var.data[...] = (1.0 - momentum) * running_var.data + momentum * var * (n / max(n - 1, 1))
                running_mean._bump_version()
                running_var._bump_version()
        else:  # copies: a later training step updates the running statistics in place
            mean, var = running_mean.data.copy(), running_var.data
        rstd = 1.0 / xp.sqrt(var + eps)
        scale = rstd if w is None else rstd * w.data
        shift = -mean * scale if b is None else b.data - mean * scale
        y = xd * scale.reshape(bshape).astype(xd.dtype, copy=False)
        y += shift.reshape(bshape).astype(xd.dtype, copy=False)
        # training's statistics are recomputed in backward (as ops of x); eval's are constants, kept
        ctx.save(input=x, weight=w, mean=None if training else mean.astype(xd.dtype, copy=False),
                 rstd=None if training else rstd.astype(xd.dtype, copy=False))
        ctx.training, ctx.eps = training, eps
        return y

    @staticmethod
    def backward(ctx, g):
        # x_hat = (x - mean) rstd;  gw = sum g x_hat;  gb = sum g;  (sums over every dim but the channels)
        # training: gx = rstd w (g - mean(g) - x_hat mean(g x_hat));  eval: gx = rstd w g
        # In Tensor ops, with training's statistics recomputed from x as ops: differentiable again.
        x, w, mean, rstd = ctx.saved_tensors
        dims = (0,) + tuple(range(2, x.ndim))
        bshape = (1, -1) + (1,) * (x.ndim - 2)
        if ctx.training:
            mean = x.mean(dim=dims, keepdim=True)
            rstd = ((x - mean) ** 2).mean(dim=dims, keepdim=True).add(ctx.eps).rsqrt()
        else:  # the running statistics: constants
            mean, rstd = mean.reshape(bshape), rstd.reshape(bshape)
        xhat = (x - mean) * rstd
        needs = ctx.needs_input_grad
        gx = None
        if needs[0]:
            k = rstd if w is None else rstd * w.reshape(bshape)
            if ctx.training:
                gx = k * (g - g.mean(dim=dims, keepdim=True) - xhat * (g * xhat).mean(dim=dims, keepdim=True))
            else:
                gx = k * g
        gw = (g * xhat).sum(dim=dims) if needs[1] else None
        gb = g.sum(dim=dims) if needs[2] else None
        return gx, gw, gb, None, None, None, None, None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1), statistics over all other dims.

    Shapes: input (N, C, *), running_mean, running_var, weight, bias (C,) or None -> like input.
    training=True: the batch's mean and biased variance normalize, and the running statistics (when
    given) move to (1 - momentum) running + momentum batch (the unbiased variance), in place;
    training=False: the running statistics normalize. One `NativeBatchNormBackward0` node.
    """
    check_tensor(input, "input", "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected input of at least 2 dimensions (N, C, *), got size {list(input.shape)}")
    C = input.shape[1]
    if training:
        n = input.numel() // max(C, 1)
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be given when training=False")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if input.data.dtype.kind != "f":
        raise NotImplementedError(f'"batch_norm" not implemented for {input.dtype}: pass a floating point tensor')
    return BatchNorm.apply(input, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps))
