"""layer_norm as one NativeLayerNormBackward0 node, saving the input, its mean and 1/std per row, and
the weight (PyTorch's saved set: x_hat is recomputed in backward, so the forward writes one array).
The reference (primitive ops, autograd): nn/_functional/reference.py's layer_norm."""
import functools
import math

import numpy as np

from minigrad import backends
from minigrad.autograd import grad_mode
from minigrad.autograd.function import keep_absent_edges
from minigrad.func import unbatched_in_vmap

from ._common import (
    Function, Tensor, check_tensor, col_sum, for_blocks, once_differentiable, row_dot, row_sum, rows_per_block,
    scratch_like, xp_of,
)


def _f32(a):
    return None if a is None else a.astype(np.float32)


def _forward_rows(xd, wd, bd, D, eps, impl=None, find=True):  # x_hat = (x - mean) / sqrt(var + eps);  y = x_hat * w + b
    """x (..., D), w and b (D,) or None -> (y (..., D), mean (N, 1), 1/std (N, 1), the backend that ran
    or None), N rows: a backend's kernel where one takes x, else numpy (or cupy) passes. find=False:
    run `impl` (None: the passes), found before for arrays of these shapes."""
    if xd.dtype == np.float16:  # PyTorch's half kernel: in float32, the statistics kept in float32, y rounded once
        out, mean, rstd, _ = _forward_rows(xd.astype(np.float32), _f32(wd), _f32(bd), D, eps, None, False)
        return out.astype(np.float16), mean, rstd, None
    xp = xp_of(xd)
    shape = xd.shape
    if xd.size == 0:  # no rows, or rows of nothing: nothing to normalize, and no kernel takes them
        return xp.empty(shape, dtype=xd.dtype), xp.empty((0, 1), xd.dtype), xp.empty((0, 1), xd.dtype), None
    # contiguous rows: a strided view (the last position's row, when generating) would compile to a
    # loop that sums in another order, and give the row another rounding than the whole batch
    x2 = xp.ascontiguousarray(xd).reshape(-1, D)
    N = x2.shape[0]
    out_full = xp.empty(shape, dtype=xd.dtype)  # allocated in its final shape: the output owns its memory
    out = out_full.reshape(N, D)
    stats = xp.empty((2, N, 1), dtype=xd.dtype)
    mean, rstd = stats[0], stats[1]  # (one allocation; indexing, not unpacking: that iterates, 0.5 us more)
    wd = wd if wd is None or wd.ndim == 1 else wd.reshape(D)
    bd = bd if bd is None or bd.ndim == 1 else bd.reshape(D)
    inv_d = 1.0 / D
    if find:
        impl = backends.find("layer_norm", out, mean, rstd, x2, wd, bd, eps)
    if impl is not None:
        impl.forward(out, mean, rstd, x2, wd, bd, eps)
        return out_full, mean, rstd, impl

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
    return out_full, mean, rstd, None


def _prepared_rows(run, D, x, w=None, b=None):
    """`_forward_rows`' output where a backend's forward was prepared for these rows (`run`, at capture):
    its arrays made and the kernel called, none of the general path's choices made again."""
    out = np.empty(x.shape, dtype=x.dtype)
    stats = np.empty((2, out.size // D, 1), dtype=x.dtype)
    run(out.reshape(-1, D), stats[0], stats[1], np.ascontiguousarray(x).reshape(-1, D), w, b)
    return out


class LayerNorm(Function):
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, normalized_shape, w, b, eps):
        D = 1
        for s in normalized_shape:
            D *= s
        wd, bd = None if w is None else w.array, None if b is None else b.array
        out, mean, rstd, ctx.impl = _forward_rows(x.array, wd, bd, D, eps)
        # the input itself, not a normalized copy: it is alive anyway (the residual stream), and
        # backward recomputes x_hat from it row by row in cache
        ctx.save(input=x, mean=mean, rstd=rstd, weight=w if ctx.needs_input_grad[0] else None)
        ctx.shapes = D, None if w is None else w.array.shape, None if b is None else b.array.shape
        ctx.eps = eps
        return out

    @staticmethod
    def array_forward(x, normalized_shape, w, b, eps):
        D = math.prod(normalized_shape)
        impl = _forward_rows(x.array, None if w is None else w.array, None if b is None else b.array, D, eps)[3]
        prepared = getattr(impl, "prepared_forward", None)
        # (1-D weight and bias, given as (x, w, b), (x, w) or (x): the replay passes the tensors' arrays only)
        if prepared is not None and (w is None or w.array.ndim == 1) and (b is None or b.array.ndim == 1) \
                and (w is not None or b is None):
            return functools.partial(_prepared_rows, prepared(x.array.dtype, eps, D), D)
        if w is not None and b is not None:
            return lambda x, w, b: _forward_rows(x, w, b, D, eps, impl, False)[0]
        if w is not None:
            return lambda x, w: _forward_rows(x, w, None, D, eps, impl, False)[0]
        if b is None:
            return lambda x: _forward_rows(x, None, None, D, eps, impl, False)[0]
        return None

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, mean, rstd, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        gx, gw, gb = _backward(g.array, x.array, mean.array, rstd.array, None if w is None else w.array, *ctx.shapes,
                               needs[0], needs[2], needs[3], ctx.impl)
        return (None if gx is None else Tensor._wrap(gx), None, None if gw is None else Tensor._wrap(gw),
                None if gb is None else Tensor._wrap(gb), None)

    @staticmethod
    def double_backward(ctx, g):  # create_graph: _backward's formulas as recorded ops, x_hat recomputed from x
        x, _, _, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        D, w_shape, b_shape = ctx.shapes
        if x.numel() == 0:  # (rows of nothing do not reshape to (-1, 0)) sums over nothing: zeros
            zero = g.sum() * 0
            return (g * zero if needs[0] else None, None, zero.expand(w_shape) if needs[2] else None,
                    zero.expand(b_shape) if needs[3] else None, None)
        x2, g2 = x.reshape(-1, D), g.reshape(-1, D)
        xc = x2 - x2.mean(1, keepdim=True)
        rstd = ((xc * xc).mean(1, keepdim=True) + ctx.eps).rsqrt()
        x_hat = xc * rstd
        gx = gw = gb = None
        if needs[0]:
            gy = g2 if w is None else g2 * w.reshape(D)
            gx = (rstd * (gy - gy.mean(1, keepdim=True) - x_hat * (gy * x_hat).mean(1, keepdim=True))).reshape(x.shape)
        if needs[2]:
            gw = (g2 * x_hat).sum(0).reshape(w_shape)
        if needs[3]:
            gb = g2.sum(0).reshape(b_shape)
        return gx, None, gw, gb, None

    @staticmethod
    def array_step(needs, x, normalized_shape, w, b, eps):
        D = math.prod(normalized_shape)
        impl = _forward_rows(x.array, None if w is None else w.array, None if b is None else b.array, D, eps)[3]
        shapes = D, None if w is None else w.array.shape, None if b is None else b.array.shape
        has_w, has_b = w is not None, b is not None

        def forward(xd, *wb):
            wd = wb[0] if has_w else None
            bd = wb[-1] if has_b else None
            out, mean, rstd, _ = _forward_rows(xd, wd, bd, D, eps, impl, False)
            return out, (xd, mean, rstd, wd if needs[0] else None)

        def backward(saved, g):
            gx, gw, gb = _backward(g, *saved, *shapes, needs[0], needs[2], needs[3], impl)
            return (gx,) + ((gw,) if has_w else ()) + ((gb,) if has_b else ())

        return forward, backward


def _backward(g, xd, mean, rstd, w, D, w_shape, b_shape, need_x, need_w, need_b, impl):
    """LayerNorm's backward on arrays: (gx, gw, gb), each None where not needed.
    x_hat = (x - mean) rstd;  gw = sum_rows g x_hat;  gb = sum_rows g;
    gx = rstd (g w - mean(g w) - x_hat mean(g w x_hat))"""
    if xd.dtype == np.float16:  # as the forward: in float32, each gradient rounded once to its input's dtype
        gx, gw, gb = _backward(_f32(g), xd.astype(np.float32), mean, rstd, _f32(w), D, w_shape, b_shape, need_x,
                               need_w, need_b, None)
        pdt = np.float16 if w is None else w.dtype
        return (None if gx is None else gx.astype(np.float16), None if gw is None else gw.astype(pdt),
                None if gb is None else gb.astype(pdt))
    xp = xp_of(xd)
    if xd.size == 0:  # sums over no rows, or rows of nothing: zeros
        zeros = xp.zeros((2, D), dtype=g.dtype)
        return _layer_norm_grads(xp.zeros(xd.shape, g.dtype) if need_x else None, zeros, need_w, need_b, w_shape,
                                 b_shape)
    N = mean.shape[0]
    x2 = xp.ascontiguousarray(xd).reshape(N, D)
    g2 = xp.ascontiguousarray(g).reshape(N, D)
    wd = None if w is None else w.reshape(D)
    gx_full = xp.empty(xd.shape, dtype=g2.dtype) if need_x else None  # owned: the engine adopts it uncopied
    gx = None if gx_full is None else gx_full.reshape(N, D)
    inv_d = 1.0 / D
    if impl is not None:
        return _layer_norm_grads(gx_full, impl.backward(gx, g2, x2, mean, rstd, wd), need_w, need_b, w_shape, b_shape)

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

    sums = xp.zeros((2, D), dtype=g2.dtype)  # gw's and gb's column sums, added up block by block
    for_blocks(N, lambda lo, hi: rows(lo, hi, sums), rows_per_block(D), xp)
    return _layer_norm_grads(gx_full, sums, need_w, need_b, w_shape, b_shape)


def _layer_norm_grads(gx, sums, need_w, need_b, w_shape, b_shape):
    """backward's arrays: gx, and the weight's and bias's gradients from their sums (2, D)."""
    gw = (sums[0] if sums[0].shape == w_shape else sums[0].reshape(w_shape)) if need_w else None
    gb = (sums[1] if sums[1].shape == b_shape else sums[1].reshape(b_shape)) if need_b else None
    return gx, gw, gb


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    check_tensor(input, "input", "layer_norm")
    if isinstance(normalized_shape, (int, np.integer)):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(map(int, normalized_shape))
    _check_layer_norm(input, normalized_shape, weight, bias)
    if weight is not None and bias is not None:  # (the usual: every edge there)
        return LayerNorm.apply(input, normalized_shape, weight, bias, float(eps))
    args = (input, normalized_shape, weight, bias, float(eps))
    return keep_absent_edges(LayerNorm.apply(*args), args, (2, 3))


def _check_layer_norm(input, normalized_shape, weight, bias):
    """PyTorch's checks and texts: the shapes, then the dtypes (a float16 input may take float32 parameters,
    its CPU kernels' mixed type; any other mix is refused)."""
    k, shape = len(normalized_shape), list(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.array.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(p.shape)} and normalized_shape = {shape}")
    if input.array.ndim < k or tuple(input.array.shape[input.array.ndim - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    _check_param_dtypes(input, weight, bias)
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for '{input.dtype._legacy[:-6]}'")


def _check_param_dtypes(input, weight, bias):
    """A float16 input may take float32 parameters (the CPU kernels' mixed type); any other mix is refused."""
    dt = input.array.dtype
    params = [p.array.dtype for p in (weight, bias) if p is not None]
    if any(d != dt for d in params) and not (dt == np.float16 and all(d == np.float32 for d in params)):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float" if dt.kind == "f" and
                           dt.itemsize <= 4 else "mixed dtype (CPU): all inputs must share same datatype.")


# ---- group_norm: one NativeGroupNormBackward0 node: layer_norm's rows are (sample, group), w and b per channel ----
class GroupNorm(Function):
    node_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, groups, w, b, eps):  # x_hat = layer_norm of each (sample, group) row;  y = x_hat w + b per channel
        xd = x.array
        N, C, S = xd.shape[0], xd.shape[1], math.prod(xd.shape[2:])
        D = C // groups * S
        y, mean, rstd, ctx.impl = _forward_rows(xd, None, None, D, eps)  # (a row: C / groups whole channels)
        planes = y.reshape(N, C, S)
        if w is not None:
            planes *= w.array.astype(xd.dtype, copy=False)[:, None]
        if b is not None:
            planes += b.array.astype(xd.dtype, copy=False)[:, None]
        ctx.save(input=x, mean=mean, rstd=rstd, weight=w)
        ctx.groups, ctx.eps = groups, eps
        ctx.b_dtype = None if b is None else b.array.dtype
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx: layer_norm's, of g w, per row;  gw = sum g x_hat, gb = sum g over samples and positions
        x, mean, rstd, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        xd = x.array
        N, C, S = xd.shape[0], xd.shape[1], math.prod(xd.shape[2:])
        g3, D = g.array.reshape(N, C, S), C // ctx.groups * S
        gx = gw = gb = None
        if needs[0]:
            gy = g3 if w is None else g3 * w.array.astype(g3.dtype, copy=False)[:, None]
            gx = Tensor._wrap(_backward(gy.reshape(xd.shape), xd, mean.array, rstd.array, None, D, None, None, True,
                                        False, False, ctx.impl)[0])
        if needs[2]:
            x_hat = ((xd.reshape(N * ctx.groups, D) - mean.array) * rstd.array).reshape(g3.shape)
            gw = Tensor._wrap(np.einsum("ncs,ncs->c", g3, x_hat).astype(w.array.dtype, copy=False))
        if needs[3]:
            gb = Tensor._wrap(g3.sum((0, 2)).astype(ctx.b_dtype, copy=False))
        return gx, None, gw, gb, None

    @staticmethod
    def double_backward(ctx, g):  # create_graph: backward's formulas as recorded ops, x_hat recomputed from x
        x, _, _, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        N, C, S = x.shape[0], x.shape[1], math.prod(x.shape[2:])
        x2 = x.reshape(N * ctx.groups, C // ctx.groups * S)
        xc = x2 - x2.mean(1, keepdim=True)
        rstd = ((xc * xc).mean(1, keepdim=True) + ctx.eps).rsqrt()
        x_hat = (xc * rstd).reshape(N, C, S)
        g3 = g.reshape(N, C, S)
        gx = gw = gb = None
        if needs[0]:
            gy = (g3 if w is None else g3 * w.reshape(C, 1)).reshape(x2.shape)
            xh = x_hat.reshape(x2.shape)
            gx = (rstd * (gy - gy.mean(1, keepdim=True) - xh * (gy * xh).mean(1, keepdim=True))).reshape(x.shape)
        if needs[2]:
            gw = (g3 * x_hat).sum((0, 2))
        if needs[3]:
            gb = g3.sum((0, 2))
        return gx, None, gw, gb, None


def group_norm_node(input, num_groups, weight, bias, eps):
    """group_norm's node, after group_norm's checks of the input (PyTorch's order)."""
    C = input.shape[1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.array.ndim != 1 or p.array.shape[0] != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(p.shape)} and input of shape {list(input.shape)}")
    _check_param_dtypes(input, weight, bias)
    args = (input, int(num_groups), weight, bias, float(eps))
    return keep_absent_edges(GroupNorm.apply(*args), args, (2, 3))


# ---- batch_norm: one NativeBatchNormBackward0 node; statistics per channel (dim 1) over every other dim -----
class BatchNorm(Function):
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, running_mean, running_var, training, momentum, eps):
        # training: batch statistics (the running ones move toward them); eval: the running statistics
        # y = x a + c per channel, a = w / sqrt(var + eps), c = b - mean a (PyTorch's form)
        xd = x.array
        xp = xp_of(xd)
        axes = (0,) + tuple(range(2, xd.ndim))
        bshape = (1, -1) + (1,) * (xd.ndim - 2)
        n = xd.size // xd.shape[1]
        wd, bd = None if w is None else w.array, None if b is None else b.array
        planes = xd.reshape(xd.shape[0], xd.shape[1], -1) if xd.ndim > 2 and xd.flags.c_contiguous else xd
        ctx.impl = backends.find("batch_norm", planes, wd, bd) if training else None
        if ctx.impl is not None:  # a backend's loops: the statistics and y
            y, stats = ctx.impl.forward(planes, wd, bd, eps)
            y = y.reshape(xd.shape)
            mean, var, rstd = stats[0], stats[1], stats[2]
        elif training:  # numpy's mean and var, their passes written out (in place where they can be)
            mean = xd.sum(axis=axes, keepdims=True)
            mean /= n
            d = xd - mean
            d *= d
            var = d.sum(axis=axes)
            var /= n
            mean = mean.reshape(-1)
        else:  # copies: a later training step updates the running statistics in place
            mean, var = running_mean.array.copy(), running_var.array
        if training and running_mean is not None:  # PyTorch's update: the unbiased variance into running_var
            rm, rv = running_mean.array, running_var.array
            rm *= 1.0 - momentum
            rm += momentum * mean
            rv *= 1.0 - momentum
            unbiased = momentum * var
            unbiased *= n / max(n - 1, 1)
            rv += unbiased
            running_mean._bump_version()
            running_var._bump_version()
        if ctx.impl is None:
            rstd = var + eps
            xp.sqrt(rstd, out=rstd)
            xp.divide(1.0, rstd, out=rstd)
            scale = rstd if w is None else rstd * wd
            shift = mean * scale
            if b is None:
                xp.negative(shift, out=shift)
            else:
                xp.subtract(bd, shift, out=shift)
            y = xd * scale.reshape(bshape).astype(xd.dtype, copy=False)
            y += shift.reshape(bshape).astype(xd.dtype, copy=False)
        # training's statistics are recomputed in a backward that is recorded (as ops of x); eval's are
        # constants, kept
        ctx.save(input=x, weight=w, mean=None if training else mean.astype(xd.dtype, copy=False),
                 rstd=None if training else rstd.astype(xd.dtype, copy=False))
        ctx.training, ctx.eps = training, eps
        ctx.stats = (mean.astype(xd.dtype, copy=False), rstd.astype(xd.dtype, copy=False))  # (C,) each
        return y

    @staticmethod
    def backward(ctx, g):
        # x_hat = (x - mean) rstd;  gw = sum g x_hat;  gb = sum g;  (sums over every dim but the channels)
        # training: gx = rstd w (g - mean(g) - x_hat mean(g x_hat));  eval: gx = rstd w g
        x, w, mean, rstd = ctx.saved_tensors
        if not grad_mode.state.grad_enabled:  # no graph of the backward wanted (no create_graph): on arrays
            return _batch_norm_backward_arrays(ctx, g.array, x.array, w) + (None,) * 5
        # In Tensor ops, with training's statistics recomputed from x as ops: differentiable again.
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


def _batch_norm_backward_arrays(ctx, g, x, w):
    """BatchNorm's backward on arrays (the formulas above), from forward's mean and 1/std: -> (gx, gw, gb)."""
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    mean, rstd = ctx.stats
    needs = ctx.needs_input_grad
    if ctx.impl is not None:  # forward's backend (training, contiguous x): its loops
        planes = x.reshape(x.shape[0], x.shape[1], -1) if x.ndim > 2 else x
        gx, gw, gb = ctx.impl.backward(g.reshape(planes.shape), planes, mean, rstd, None if w is None else w.array,
                                       needs[0])
        gx = None if gx is None else gx.reshape(x.shape)
        return (None if gx is None else Tensor._wrap(gx), Tensor._wrap(gw) if needs[1] else None, Tensor._wrap(gb) if needs[2] else None)
    n = x.size // x.shape[1]
    xhat = x - mean.reshape(bshape)
    xhat *= rstd.reshape(bshape)
    gb = g.sum(axis=axes)
    gw = (g * xhat).sum(axis=axes)
    gx = None
    if needs[0]:
        k = rstd if w is None else rstd * w.array
        if ctx.training:  # gx = k (g - gb / n - x_hat gw / n), in x_hat's buffer
            xhat *= (gw / n).reshape(bshape)
            gx = g - (gb / n).reshape(bshape)
            gx -= xhat
            gx *= k.reshape(bshape)
        else:
            gx = g * k.reshape(bshape)
    return (None if gx is None else Tensor._wrap(gx), Tensor._wrap(gw) if needs[1] else None, Tensor._wrap(gb) if needs[2] else None)


_VMAP_STATS = ("Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated "
               "in place, were not batched.\nIf you are using a module and do not need eval mode, please set "
               "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, "
               "please see the functorch website for resources on how to patch your module to work with vmap")


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
    if training and input.shape[0] * math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    if input.array.size == 0:  # PyTorch's: no statistics, the running ones untouched; a graph through x, w, b
        return _empty_affine(input, weight, bias)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if not training and t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if training and unbatched_in_vmap(running_mean, running_var):
        raise RuntimeError(_VMAP_STATS)  # (vmap's batching rule refuses before the kernel checks)
    if training and (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"batch_norm" not implemented for {input.dtype}: pass a floating point tensor')
    args = (input, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps))
    return keep_absent_edges(BatchNorm.apply(*args), args, (1, 2), drop=(3, 4))  # (no edge for the statistics)


def _empty_affine(input, weight, bias):
    """batch_norm's output for an empty input, as PyTorch makes it: x's copy times weight[0] plus bias[0]."""
    for p in (weight, bias):
        if p is not None and p.numel() == 0:
            raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    y = input.clone()
    y = y if weight is None else y * weight[0]
    return y if bias is None else y + bias[0]
