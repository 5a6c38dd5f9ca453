"""max_pool2d, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d and interpolate (nearest, linear, bilinear).

The two window pools read the (padded) input through conv.py's `windows` view; their backward is
conv.py's col2im, an op of its own whose backward reads windows again (both pools differentiate twice).
max_pool2d runs on the backend's "max_pool2d" kernel where one takes the input (the CPU's compiled
loop: minigrad/backends/cpu/max_pool.py), forward and first backward; a create_graph backward is the
recorded op (MaxPoolScatter) either way. avg_pool2d and avg_pool3d run on the backend's "avg_pool" kernel
where one takes the arrays (minigrad/backends/cpu/avg_pool.py: PyTorch's summation order, so its bits), in
their forward and in their backward's op (AvgPoolAdjoint), so a create_graph backward runs on it too.
adaptive_avg_pool2d and interpolate are linear maps acting on each spatial axis
alone: y = A_h x A_w^T with small dense matrices (an averaging or a selection or an interpolation
matrix per axis), one node `Separable` whose backward is the same op with the transposed matrices,
so it is differentiable twice. The matrices cost O(out * in) per axis: meant for feature maps of a
few hundred pixels a side, not for resizing photographs.
"""
import functools
import itertools
import math
import operator
from builtins import max as builtins_max, min as builtins_min

import numpy as np

import minigrad
from minigrad import backends
from minigrad.ops.array_op import array_op
from minigrad.tensor import type_name

from ._common import Function, Tensor, check_tensor, second_order, xp_of
from .conv import col2im, crop, expand_param, pad_array, windows


def _int_like(v):
    return hasattr(type(v), "__index__")  # (an int, a numpy integer, a 0-d integer tensor; not a float)


def check_int_args(name, kernel_size, stride, padding, dilation):
    """PyTorch's TypeError for a pool's size argument that is neither an int nor a sequence of ints (stride
    alone may be None: the kernel's size)."""
    for position, (what, v) in enumerate((("kernel_size", kernel_size), ("stride", stride), ("padding", padding),
                                          ("dilation", dilation)), 2):
        if not ((v is None and what == "stride") or _int_like(v)
                or isinstance(v, (tuple, list)) and all(map(_int_like, v))):
            raise TypeError(f"{name}(): argument '{what}' (position {position}) must be tuple of ints, not "
                            f"{type(v).__name__}")


def _c_half(v):
    """v / 2 rounded toward zero, as C's integer division (PyTorch's check of a negative kernel relies on it)."""
    return v // 2 if v >= 0 else -(-v // 2)


def _pool_args(input, kernel_size, stride, padding, dilation, name, n=2):
    """kernel, stride, padding, dilation as n-tuples (n = 2 or 3), with PyTorch's checks, in its order, and its
    messages for `name`."""
    check_tensor(input, "input", name)
    check_int_args(name, kernel_size, stride, padding, dilation)
    must, count = "must be" if name == "avg_pool3d" else "must either be", ("two", "three")[n - 2]
    axes = "HW" if n == 2 else "THW"

    def n_ints(value, what, omitted=""):
        v = (operator.index(value),) if _int_like(value) else tuple(operator.index(a) for a in value)
        if len(v) not in (1, n):
            raise RuntimeError(f"{name}: {what} {must} {omitted}a single int, or a tuple of {count} ints"
                               if what != "dilation" else
                               f"{name}: dilation must be either a single int, or a tuple of {count} ints")
        return v * n if len(v) == 1 else v

    def named(prefix, values):  # "kH: 2 kW: 3"
        return " ".join(f"{prefix}{a}: {v}" for a, v in zip(axes, values))

    kernel = n_ints(kernel_size, "kernel_size")
    omitted = stride is None or (not _int_like(stride) and len(stride) == 0)
    stride = kernel if omitted else n_ints(stride, "stride", "omitted, ")
    padding, dilation = n_ints(padding, "padding"), n_ints(dilation, "dilation")
    if n == 2 and name == "avg_pool2d":  # (avg_pool2d reads the channels' size first: an IndexError)
        input.size(-3)
    elif input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")
    for k, st, p, d in zip(kernel, stride, padding, dilation):  # each axis's output size, in turn
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > _c_half((k - 1) * d + 1):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} "
                               f"and dilation={d}")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {named('k', kernel)}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {named('d', stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {named('dilation', dilation)}")
    shape = list(input.shape)
    if n == 2 and (input.ndim not in (3, 4) or 0 in shape[-3:]):  # (a batch of none is allowed: an empty result)
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shape}")
    if n == 3 and 0 in shape[-4:]:  # (PyTorch's message says dimension 0 whichever is empty)
        where = "max_pool3d_with_indices_out_cpu_template" if name == "max_pool3d" else name
        raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {shape} and non-batch dimension 0 has length zero!")
    if any(p > k // 2 for p, k in zip(padding, kernel)):  # (reached with a dilation: half the kernel itself)
        if n == 2:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = "
                               f"{padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kernel[0]} kW: "
                           f"{kernel[2]} kH: {kernel[1]} padT: {padding[0]} padW: {padding[2]} padH: {padding[1]}")
    return kernel, stride, padding, dilation


def pooled_size(s, k, st, p, d, ceil_mode):
    """The number of windows along a side of s: PyTorch's pooling output size."""
    span = s + 2 * p - d * (k - 1) - 1
    o = (-(-span // st) if ceil_mode else span // st) + 1
    if ceil_mode and (o - 1) * st >= s + p:
        o -= 1
    return o


def _pool_geometry(shape, kernel, stride, padding, dilation, ceil_mode):
    """(out sizes, pads ((lo, hi), ...)): PyTorch's output size; with ceil_mode a last, partial window is
    kept if it starts inside the input or its left padding, and the right pad grows to hold it."""
    n = len(kernel)
    out, pads = [], []
    for s, k, st, p, d in zip(shape[-n:], kernel, stride, padding, dilation):
        o = pooled_size(s, k, st, p, d, ceil_mode)
        out.append(o)
        pads.append((p, max(p, (o - 1) * st + d * (k - 1) + 1 - s - p)))
    if min(out) <= 0:
        c = shape[-n - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shape[-n - 1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (c,) + tuple(out)))}). Output size is too small")
    return tuple(out), tuple(pads)


def _tiling(kernel, stride):
    """Whether the windows tile the (padded) input: stride == kernel (no dilation), so no two overlap."""
    return tuple(stride) == tuple(kernel)


def _tiles(acc, kernel, out):
    """The view (N, C, o0, k0, o1, k1, ...) of acc's corner that tiling windows cover, each window [.., i, :, j, :]."""
    corner = acc[(slice(None), slice(None)) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    return corner.reshape(acc.shape[:2] + tuple(v for o, k in zip(out, kernel) for v in (o, k)))  # a view


def _along(a, i, n):
    """A 1-d array of axis i's values, shaped to broadcast against the last n axes."""
    return a.reshape((-1,) + (1,) * (n - 1 - i))


class MaxPool2d(Function):
    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, dilation, padding, pads, out):
        # y = the max of each window and where it is as a flat index into the plane (or volume), PyTorch's: NaN
        # wins (the window's last NaN), ties go to the first in scan order, a window of -infs to its first element
        n = len(kernel)
        batched = x.array.ndim == n + 2
        xd = x.array if batched else x.array[None]  # an unbatched (C, *spatial) input as one sample
        ctx.pool, ctx.padding = (kernel, stride, dilation, pads, out, xd.shape), padding
        ctx.impl = backends.find("max_pool2d", xd, kernel, stride, dilation, padding, out) if n == 2 else None
        if ctx.impl is not None:
            y, idx = ctx.impl.forward(xd, kernel, stride, dilation, padding, out)
            ctx.arg, ctx.idx = None, idx  # (the window offsets MaxPoolScatter takes: from idx, if asked)
        else:
            xp = xp_of(xd)
            low = -np.inf if xd.dtype.kind == "f" else np.iinfo(xd.dtype).min
            v = windows(pad_array(xd, pads, low), kernel, stride, dilation, out)
            flat = v.reshape(v.shape[:2 + n] + (math.prod(kernel),))  # (N, C, *out, prod(kernel)): a copy
            arg = flat.argmax(axis=-1)
            y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
            bad = ~(y > low)  # a NaN (argmax took the first), or nothing above the padding: PyTorch's choice
            if bad.any():
                arg = _torch_argmax(flat, arg, bad, kernel, stride, dilation, padding, xp)
                y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
            ctx.arg = arg
            idx = _flat_indices(arg, kernel, stride, dilation, padding, xd.shape[2:], xp)
        return (y, idx) if batched else (y[0], idx[0])

    @staticmethod
    def backward(ctx, g, _):  # each window's gradient goes to its max
        graph = minigrad.is_grad_enabled()  # create_graph: the recorded op, and x's edge (argmax: slope 0)
        if ctx.impl is not None and not graph:
            gd = g.array if g.array.ndim == 4 else g.array[None]
            gx = ctx.impl.backward(gd, ctx.idx, ctx.pool[-1])
            return Tensor._wrap(gx if g.array.ndim == 4 else gx[0]), None, None, None, None, None, None
        if ctx.arg is None:
            ctx.arg = _window_offsets(ctx.idx, ctx.pool, ctx.padding)
        gx = MaxPoolScatter.apply(g, ctx.arg, ctx.pool)
        return second_order(ctx, gx) if graph else gx, None, None, None, None, None, None


MaxPool3d = type("MaxPool3d", (MaxPool2d,), {"node_name": "MaxPool3DWithIndicesBackward0", "__module__": __name__})


def _torch_argmax(flat, arg, bad, kernel, stride, dilation, padding, xp):
    """The window argmaxes (N, C, *out) where PyTorch's loop differs from numpy's argmax (windows `bad`):
    PyTorch's last NaN of a window where it has one, else (nothing above the padding's value) the window's
    first element inside the input."""
    n = len(kernel)
    first = 0  # each window's first kernel offset inside the input, per axis ceil((p - o s) / d) at least 0, flat
    for i, (o, s, p, d, k) in enumerate(zip(arg.shape[-n:], stride, padding, dilation, kernel)):
        before = p - xp.arange(o) * s
        first = first * k + _along(xp.where(before > 0, -(-before // d), 0), i, n)
    arg = xp.where(bad, first, arg)
    if flat.dtype.kind == "f":
        nan = xp.isnan(flat)
        last = flat.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
        arg = xp.where(nan.any(axis=-1), last, arg)
    return arg


def _window_offsets(idx, pool, padding):
    """Flat indices into the plane (N, C, *out) -> each window's flat kernel offset (_flat_indices's inverse),
    the argmaxes MaxPoolScatter takes."""
    kernel, stride, dilation, _, out, shape = pool
    n = len(kernel)
    xp = xp_of(idx)
    pos = xp.unravel_index(idx, tuple(shape[2:]))
    arg = 0
    for i, (o, s, p, d, k) in enumerate(zip(out, stride, padding, dilation, kernel)):
        arg = arg * k + (pos[i] - _along(xp.arange(o) * s - p, i, n)) // d
    return arg


# max_pool2d's backward, and that backward's own: adding each window's value at its argmax, and reading the
# value at each window's argmax, are adjoint linear maps (with the argmaxes fixed): each one's backward is the
# other, so max_pool2d differentiates twice
class MaxPoolScatter(Function):
    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, g, arg, pool):  # window values (N, C, *out) -> added at their argmax in (N, C, *spatial)
        kernel, stride, dilation, pads, out, shape = pool
        gd = g.array.reshape(arg.shape)
        xp = xp_of(gd)
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        zero = gd.dtype.type(0)
        # gx = sum over kernel offsets k of g where the argmax is k, added at the offset's window positions
        acc = col2im(lambda k: xp.where(arg == np.ravel_multi_index(k, kernel), gd, zero), shape[:2], padded, kernel,
                     stride, dilation, out, gd.dtype, xp)
        gx = xp.ascontiguousarray(crop(acc, pads, shape[2:]))
        ctx.arg, ctx.pool, ctx.unbatched = arg, pool, g.array.ndim == len(shape) - 1
        return gx[0] if ctx.unbatched else gx

    @staticmethod
    def backward(ctx, gg):
        return MaxPoolGather.apply(gg, ctx.arg, ctx.pool), None, None


class MaxPoolGather(Function):
    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, x, arg, pool):  # (N, C, *spatial) -> the value at each window's argmax (N, C, *out)
        kernel, stride, dilation, pads, out, shape = pool
        xd = x.array.reshape(shape)
        v = windows(pad_array(xd, pads), kernel, stride, dilation, out)
        y = xp_of(xd).take_along_axis(v.reshape(v.shape[:len(shape)] + (-1,)), arg[..., None], axis=-1)[..., 0]
        ctx.arg, ctx.pool = arg, pool
        return y[0] if x.array.ndim == len(shape) - 1 else y

    @staticmethod
    def backward(ctx, g):
        return MaxPoolScatter.apply(g, ctx.arg, ctx.pool), None, None


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n, name):
    kernel, stride, padding, dilation = _pool_args(input, kernel_size, stride, padding, dilation, name, n)
    if input.array.dtype == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    out, pads = _pool_geometry(input.shape, kernel, stride, padding, dilation, ceil_mode)
    y, idx = (MaxPool2d if n == 2 else MaxPool3d).apply(input, kernel, stride, dilation, padding, pads, out)
    # the indices the caller gets are a copy: the kernel's backward reads the node's own, which an in-place
    # edit of the returned ones would otherwise change (an op's copy: a minigrad.compile replay copies each call's)
    return (y, array_op(lambda a: a.copy(), idx)) if return_indices else y


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each kH x kW window. Shapes: input (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out),
    H_out = (H + 2p - d (kH - 1) - 1) / s + 1 rounded down (up with ceil_mode); stride defaults to the
    kernel; padding (at most half the kernel) never wins. return_indices: also the argmax of each window
    as a flat index into its H x W plane (int64). One `MaxPool2DWithIndicesBackward0` node."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each kD x kH x kW window. Shapes: input (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out,
    H_out, W_out), each size as max_pool2d's. return_indices: also the argmax of each window as a flat index
    into its D x H x W volume (int64). One `MaxPool3DWithIndicesBackward0` node."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d's values and indices, whatever return_indices says (PyTorch's)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d's values and indices, whatever return_indices says (PyTorch's)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _flat_indices(arg, kernel, stride, dilation, padding, spatial, xp):
    """Window argmaxes (N, C, *out) in [0, prod(kernel)) -> flat positions into the input's plane (or volume)
    `spatial`, row-major."""
    n = len(kernel)
    offsets = xp.unravel_index(arg, tuple(kernel))
    flat = 0
    for i, (o, s, p, d, size) in enumerate(zip(arg.shape[-n:], stride, padding, dilation, spatial)):
        flat = flat * size + _along(xp.arange(o) * s - p, i, n) + offsets[i] * d
    return flat.astype(np.int64)


class AvgPool2d(Function):
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, out, divisor):  # y = sum of each window / divisor
        n = len(kernel)
        batched = x.array.ndim == n + 2
        xd = x.array if batched else x.array[None]  # an unbatched (C, *spatial) input as one sample
        ctx.pool = kernel, stride, pads, out, xd.shape, divisor
        low = tuple(lo for lo, _ in pads)
        impl = backends.find("avg_pool", xd, kernel, stride, low, out)
        if impl is not None:
            y = impl.forward(xd, kernel, stride, low, out, divisor)
        else:
            v = windows(pad_array(xd, pads), kernel, stride, (1,) * n, out)
            y = v.sum(axis=tuple(range(-n, 0))) / divisor
        return y if batched else y[0]

    @staticmethod
    def backward(ctx, g):  # every element of a window gets g / divisor
        gx = AvgPoolAdjoint.apply(g, ctx.pool)
        return second_order(ctx, gx) if minigrad.is_grad_enabled() else gx, None, None, None, None, None


AvgPool3d = type("AvgPool3d", (AvgPool2d,), {"node_name": "AvgPool3DBackward0", "__module__": __name__})


class AvgPoolAdjoint(Function):
    """avg_pool2d's backward as an op of its own; its backward is avg_pool2d again (both linear)."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, g, pool):
        kernel, stride, pads, out, shape, divisor = pool
        ctx.pool = pool
        unbatched = g.array.ndim != len(shape)
        gd = g.array[None] if unbatched else g.array
        low = tuple(lo for lo, _ in pads)
        impl = backends.find("avg_pool", gd, kernel, stride, low, out)
        if impl is not None:
            gx = impl.backward(gd, shape, kernel, stride, low, out, divisor)
            return gx[0] if unbatched else gx
        gd = gd / divisor
        xp = xp_of(gd)
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        if _tiling(kernel, stride):  # no overlap: every element of a window's tile is its g / divisor
            acc = xp.zeros(tuple(shape[:2]) + padded, dtype=gd.dtype)
            _tiles(acc, kernel, out)[...] = gd.reshape(gd.shape[:2] + tuple(v for o in out for v in (o, 1)))
        else:
            acc = col2im(lambda k: gd, shape[:2], padded, kernel, stride, (1,) * len(kernel), out, gd.dtype, xp)
        gx = xp.ascontiguousarray(crop(acc, pads, shape[2:]))
        return gx[0] if unbatched else gx

    @staticmethod
    def backward(ctx, gg):
        kernel, stride, pads, out, shape, divisor = ctx.pool
        return (AvgPool2d if len(kernel) == 2 else AvgPool3d).apply(gg, kernel, stride, pads, out, divisor), None


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, n, name):
    kernel, stride, padding, _ = _pool_args(input, kernel_size, stride, padding, 1, name, n)
    if input.array.dtype.kind != "f":
        if input.dtype == minigrad.int64:  # PyTorch's kernels take int64 too: each sum divided, rounded toward 0
            return _avg_pool(input.double(), kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, n, name).trunc().long()
        kernel = name if n == 2 else f"{name}_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input
    if n == 3 and any(s < k for s, k in zip(x.shape[-3:], kernel)):  # (PyTorch's check ignores the padding)
        raise RuntimeError(f"input image (T: {x.shape[-3]} H: {x.shape[-2]} W: {x.shape[-1]}) smaller than kernel "
                           f"size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    out, pads = _pool_geometry(x.shape, kernel, stride, padding, (1,) * n, ceil_mode)
    xp = xp_of(x.array)
    if divisor_override is not None:
        divisor = float(divisor_override)
    else:
        counts = []
        for s, k, st, p, o in zip(x.shape[-n:], kernel, stride, padding, out):
            start = np.arange(o) * st - p
            end = np.minimum(start + k, s + p)
            counts.append(end - start if count_include_pad else np.minimum(end, s) - np.maximum(start, 0))
        divisor = xp.asarray(functools.reduce(np.multiply.outer, counts), dtype=x.array.dtype)
    return (AvgPool2d if n == 2 else AvgPool3d).apply(x, kernel, stride, pads, out, divisor)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean over each kH x kW window. Shapes as max_pool2d. The divisor is the window's size clipped to
    the padded input (count_include_pad) or to the input itself, or `divisor_override`. One
    `AvgPool2DBackward0` node."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean over each kD x kH x kW window. Shapes as max_pool3d; the divisor as avg_pool2d's. One
    `AvgPool3DBackward0` node."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                     "avg_pool3d")


# ---- separable linear maps: adaptive average pooling and interpolation ------------------------------------
class Separable(Function):
    """y = x with matrix A_i applied along each of the last len(mats) axes (A_i of shape (out_i, in_i); None: the
    identity, the axis left as it is)."""

    node_name = "SeparableBackward0"
    reads_input = False  # PyTorch's backward reads x (adaptive pooling's; interpolation's takes its sizes only)

    @staticmethod
    def forward(ctx, x, mats):
        y = x.array
        xp = xp_of(y)
        n = len(mats)
        for i, a in enumerate(mats):
            ax = y.ndim - n + i
            if a is None:  # (the identity: an axis that keeps its size)
                continue
            if isinstance(a, Nearest):
                y = a.along(y, ax)
            elif ax == y.ndim - 1:  # one product of all rows, not one per leading index (numpy's stacked matmul)
                y = xp.matmul(y.reshape(math.prod(y.shape[:-1]), y.shape[-1]), a.T).reshape(y.shape[:-1] + (a.shape[0],))
            elif ax == y.ndim - 2:
                y = xp.matmul(a, y)
            else:
                y = xp.moveaxis(xp.matmul(xp.moveaxis(y, ax, -1), a.T), -1, ax)
        ctx.mats = mats
        return y.copy() if y is x.array else xp.ascontiguousarray(y)  # (all identities: a result of its own)

    @staticmethod
    def backward(ctx, g):  # the adjoint: the transposed matrices (itself a Separable: twice differentiable)
        cls = ctx._forward_cls
        gx = cls.apply(g, tuple(None if a is None else a.T for a in ctx.mats))
        return second_order(ctx, gx) if cls.reads_input and minigrad.is_grad_enabled() else gx, None


class Nearest:
    """The selection matrix (n_out, n_in) of source pixels `src` (nearest's, or a non-constant pad's), or transposed
    its adjoint, applied as a gather: a product by the 0/1 matrix would turn an inf or NaN input into NaN across its whole row.
    An integer upscale f (src = i // f) is a broadcast copy, and its adjoint sums each pixel's f outputs."""

    def __init__(self, src, n_in, transposed=False):
        self.src, self.n_in, self.transposed = src, n_in, transposed
        n_out = len(src)
        f = n_out // n_in if n_in else 0
        self.repeat = f if f and f * n_in == n_out and (src == np.arange(n_out) // f).all() else None

    @property
    def T(self):
        return Nearest(self.src, self.n_in, not self.transposed)

    def along(self, y, ax):
        xp, f, shape = xp_of(y), self.repeat, y.shape
        # (with an integer f: f strided copies or adds of whole slabs, not numpy's loops over an axis of f)
        every = [(slice(None),) * ax + (slice(r, None, f),) for r in range(f or 0)]
        if not self.transposed:
            if f is None:
                return xp.take(y, xp.asarray(self.src), axis=ax)
            out = xp.empty(shape[:ax] + (shape[ax] * f,) + shape[ax + 1:], dtype=y.dtype)
            for at in every:
                out[at] = y
            return out
        if f is not None:
            acc = y[every[0]].copy()
            for at in every[1:]:
                acc += y[at]
            return acc
        if xp is np:  # each output's gradient added to its source pixel, in output order (PyTorch's), a
            # slab per output position (add.at's loop is per element: 5 times PyTorch's time on a padded batch)
            moved = np.moveaxis(y, ax, 0)
            out = np.zeros((self.n_in,) + moved.shape[1:], dtype=y.dtype)
            for j, i in enumerate(self.src.tolist()):
                out[i] += moved[j]
            return np.moveaxis(out, 0, ax)
        a = np.zeros((len(self.src), self.n_in), dtype=y.dtype)  # (an inf there turns the row NaN: 0 * inf)
        a[np.arange(len(self.src)), self.src] = 1.0
        return xp.moveaxis(xp.matmul(xp.moveaxis(y, ax, -1), xp.asarray(a)), -1, ax)


def _separable(node_name, reads_input=False):
    return type(node_name.replace("Backward0", ""), (Separable,), {"node_name": node_name, "reads_input": reads_input,
                                                                   "__module__": __name__})


AdaptiveAvgPool2d = _separable("AdaptiveAvgPool2DBackward0", True)
AdaptiveAvgPool3d = _separable("AdaptiveAvgPool3DBackward0", True)
_UPSAMPLE = {(mode, n): _separable(f"Upsample{name}{n}DBackward0") for mode, name in
             (("nearest", "Nearest"), ("nearest-exact", "NearestExact")) for n in (1, 2, 3)}
_UPSAMPLE.update({("linear", 1): _separable("UpsampleLinear1DBackward0"),
                  ("bilinear", 2): _separable("UpsampleBilinear2DBackward0"),
                  ("trilinear", 3): _separable("UpsampleTrilinear3DBackward0"),
                  ("bicubic", 2): _separable("UpsampleBicubic2DBackward0"),
                  ("bilinear-aa", 2): _separable("UpsampleBilinear2DAaBackward0"),
                  ("bicubic-aa", 2): _separable("UpsampleBicubic2DAaBackward0")})


def _average_matrix(n_in, n_out, dtype):  # row i averages [floor(i n_in / n_out), ceil((i + 1) n_in / n_out))
    a = np.zeros((n_out, n_in), dtype=dtype)
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def _adaptive_size(input, output_size, n, name):
    """output_size (an int, or n ints or None = keep) -> n ints, with PyTorch's checks for `name`."""
    check_tensor(input, "input", name)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * n
    if len(output_size) != n and name == "adaptive_avg_pool3d":  # (its size is checked before the rank)
        raise RuntimeError(f"{name}: output_size must be {n}")
    if input.ndim not in (n + 1, n + 2):
        sep = ":" if name.startswith("adaptive_max") else ""
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{sep} {list(input.shape)}")
    if len(output_size) != n:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}" if name.startswith("adaptive_max")
                           else f"{name}: output_size must be {n}")
    return tuple(s if o is None else int(o) for o, s in zip(output_size, input.shape[-n:]))


def _check_output_rank(input, output_size):
    """PyTorch's first check of a sequence output_size: the input has more dims than it names."""
    if isinstance(output_size, (tuple, list)) and hasattr(input, "ndim") and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _check_adaptive_nonempty(input, name):
    """PyTorch's check that the sizes past the batch are non-zero (adaptive_avg_pool2d's only the plane's)."""
    first = input.ndim - 2 if name == "adaptive_avg_pool2d" else 1
    for i in range(first, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {i} being empty")


def _adaptive_avg_pool(input, output_size, n, name):
    _check_output_rank(input, output_size)
    ones = (output_size,) * n if isinstance(output_size, int) else tuple(output_size or (None,))
    if len(ones) == n and all(o == 1 for o in ones) and getattr(input, "ndim", 0) and input.dtype.is_floating_point:
        # PyTorch takes this case as a mean before any of its checks, so it accepts any rank (the last dim
        # first: a too-short input's error names the first one missing)
        return input.mean(tuple(range(-1, -n - 1, -1)), keepdim=True)
    size = _adaptive_size(input, output_size, n, name)
    if min(size) < 0:
        shown = ", ".join(map(str, size)) if n == 2 else f"{size[0]}, " + ",".join(map(str, size[1:]))  # (sic)
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{shown}}}")
    _check_adaptive_nonempty(input, name)
    if input.array.dtype.kind != "f":
        kernel = name if n == 2 else f"{name}_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")
    if all(o == 1 for o in size):  # PyTorch's is then the mean over the window (its node MeanBackward1)
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    xp, dt = xp_of(input.array), input.array.dtype
    mats = tuple(None if s == o else xp.asarray(_average_matrix(s, o, dt)) for s, o in zip(input.shape[-n:], size))
    return (AdaptiveAvgPool2d if n == 2 else AdaptiveAvgPool3d).apply(input, mats)


def adaptive_avg_pool2d(input, output_size):
    """Averages over PyTorch's adaptive windows, giving exactly output_size (an int, a pair, None = keep).
    Shapes: (N, C, H, W) or (C, H, W) -> (N, C, *output_size). One `AdaptiveAvgPool2DBackward0` node."""
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Averages over PyTorch's adaptive windows, giving exactly output_size (an int, three, None = keep).
    Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size). One `AdaptiveAvgPool3DBackward0` node."""
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _cubic(x, a):
    """Keys' cubic convolution kernel with parameter a (PyTorch: -0.75 to upsample, -0.5 with antialias)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _antialias_matrix(n_in, n_out, mode, align_corners, ratio):
    """(n_out, n_in) with antialias: each output averages the inputs under its filter (triangle or cubic) stretched
    by the downscale, the weights normalised to sum to 1 (PyTorch's and PIL's resampling)."""
    a = np.zeros((n_out, n_in))
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    taps = 2 if mode == "bilinear" else 4
    stretch = max(ratio, 1.0)
    support = taps * 0.5 * stretch
    for i in range(n_out):
        centre = ratio * (i + 0.5)
        lo, hi = max(int(centre - support + 0.5), 0), min(int(centre + support + 0.5), n_in)
        x = (np.arange(lo, hi) - centre + 0.5) / stretch
        w = np.maximum(1.0 - np.abs(x), 0.0) if mode == "bilinear" else _cubic(x, -0.5)
        a[i, lo:hi] = w / w.sum() if w.sum() != 0 else w
    return a


def _uint8_weights(n_in, n_out, mode, align_corners, scale_factor, antialias):
    """PyTorch's uint8 resampling weights along one axis: (input index of each tap (n_out, k), int16 weights
    (n_out, k), the fixed-point precision). The filter centred on each output pixel (Pillow's): its taps within
    the axis, normalized; bicubic without antialias (OpenCV's): four taps, those past an edge on the edge pixel.
    Then scaled by 2^precision, the largest precision that keeps the weights within int16."""
    width = 2 if mode == "bilinear" else 4
    if align_corners:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        scale = 1 / scale_factor if scale_factor else n_in / n_out
    stretch = antialias and scale >= 1  # (a downscale with antialias widens the filter by the scale)
    support = width * 0.5 * (scale if stretch else 1)
    k = math.ceil(support) * 2 + 1 if antialias else width
    delta = 0.5 if align_corners and not antialias else 0.0
    a = -0.5 if antialias else -0.75  # (the cubic's a: Pillow's with antialias, OpenCV's without)

    def filt(x):
        x = abs(x)
        if mode == "bilinear":
            return 1 - x if x < 1 else 0.0
        if x < 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        return (((x - 5) * x + 8) * x - 4) * a if x < 2 else 0.0

    taps, weights = np.zeros((n_out, k), dtype=np.int64), np.zeros((n_out, k))
    for i in range(n_out):
        center = scale * (i + 0.5 - delta)
        if mode == "bicubic" and not antialias:
            lo = math.floor(center - 0.5 + delta) - 1
            taps[i] = np.clip(np.arange(lo, lo + k), 0, n_in - 1)
            for j in range(k):  # (a tap past an edge adds its weight to the edge pixel's)
                weights[i, list(taps[i]).index(taps[i, j])] += filt(lo + j - (center - 0.5 + delta))
            continue
        lo = builtins_max(int(center - support + 0.5 + delta), 0)  # (int(): C's truncation toward zero)
        count = builtins_min(builtins_max(builtins_min(int(center + support + 0.5 + delta), n_in) - lo, 0), k)
        w = [filt((j + lo - center + 0.5 - delta) / (scale if stretch else 1)) for j in range(count)]
        total = sum(w)
        taps[i] = np.minimum(np.arange(lo, lo + k), n_in - 1)  # (the taps past the window weigh 0)
        weights[i, :count] = [v / total for v in w] if total else w
    precision = 0
    while precision < 22 and int(0.5 + weights.max() * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = weights * (1 << precision)
    return taps, np.trunc(scaled + np.where(scaled < 0, -0.5, 0.5)).astype(np.int64), precision


def _resample_uint8(input, size, scales, mode, align_corners, antialias):
    """interpolate of a uint8 image (N, C, H, W) as PyTorch's: one axis at a time (width, then height; an axis
    of unchanged size left alone), each output the weighted sum of its taps with int16 weights, rounded
    (half up) and clamped to [0, 255] before the next axis."""
    x = input.array.astype(np.int64)
    for axis in (3, 2):
        if x.shape[axis] == size[axis - 2]:
            continue
        taps, w, precision = _uint8_weights(x.shape[axis], size[axis - 2], mode, align_corners, scales[axis - 2],
                                            antialias)
        picked = np.moveaxis(np.take(x, taps, axis=axis), (axis, axis + 1), (-2, -1))  # (..., n_out, k)
        acc = (picked * w).sum(-1) + (1 << (precision - 1))
        x = np.moveaxis(np.clip(acc >> precision, 0, 255), -1, axis)
    return Tensor._wrap(np.ascontiguousarray(x.astype(np.uint8)))


def _interp_matrix(n_in, n_out, mode, align_corners, scale, dtype, antialias=False):
    """(n_out, n_in): PyTorch's source position of each output pixel, as a selection (nearest: a Nearest) or the
    neighbours' weights (linear: two, bicubic: four, clamped at the border). `scale`: the user's scale_factor
    (PyTorch then uses 1/scale, not n_in/n_out)."""
    a = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    ratio = (1.0 / scale) if scale else n_in / n_out
    if mode in ("nearest", "nearest-exact"):  # the pixel left of the source position, or (exact) its centre's
        return Nearest(np.minimum(np.floor((rows + (0.5 if mode == "nearest-exact" else 0.0)) * ratio)
                                  .astype(np.int64), n_in - 1), n_in)
    if antialias:
        return _antialias_matrix(n_in, n_out, mode, align_corners, ratio).astype(dtype)
    if align_corners:
        pos = rows * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    elif mode == "bicubic":  # (the source position is not clamped at 0: the taps are)
        pos = (rows + 0.5) * ratio - 0.5
    else:
        pos = np.maximum((rows + 0.5) * ratio - 0.5, 0.0)
    if mode == "bicubic":
        lo = np.floor(pos).astype(np.int64)
        t = pos - lo
        for k, w in zip(range(-1, 3), (_cubic(t + 1, -0.75), _cubic(t, -0.75), _cubic(1 - t, -0.75), _cubic(2 - t, -0.75))):
            np.add.at(a, (rows, np.clip(lo + k, 0, n_in - 1)), w)
        return a
    lo = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    w = pos - lo
    np.add.at(a, (rows, lo), 1.0 - w)
    np.add.at(a, (rows, hi), w)
    return a


def _is_integer(x):
    """An int as PyTorch's interpolate takes one in a size: a Python or numpy int, or an integer tensor."""
    return isinstance(x, (int, np.integer)) or (hasattr(x, "dtype") and hasattr(x, "is_floating_point")
                                                 and not x.is_floating_point())


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize the spatial dims: mode 'nearest', 'nearest-exact' or 'area' (3-D, 4-D or 5-D input), 'linear' (3-D),
    'bilinear' or 'bicubic' (4-D; antialias=True filters a downscale) or 'trilinear' (5-D), with PyTorch's pixel
    geometry (align_corners for the interpolating modes). Give `size` (an int or one per spatial dim) or `scale_factor`. Shapes: (N, C, L), (N, C, H, W)
    or (N, C, D, H, W) -> the same with the new sizes. One `UpsampleNearest2DBackward0` /
    `UpsampleBilinear2DBackward0` / ... node. A uint8 image resizes by nearest, bilinear or bicubic with
    PyTorch's fixed-point rounding (no gradient)."""
    check_tensor(input, "input", "interpolate")
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
    if align_corners is not None and mode in ("nearest", "nearest-exact", "area"):
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    n = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None else
                         "either size or scale_factor should be defined")
    sp = tuple(input.shape[2:])
    if size is not None:
        if isinstance(size, (tuple, list)) and len(size) != n:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(sp)} and output size of {size}. Please provide input tensor "
                             "in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if isinstance(size, (tuple, list)) and not all(_is_integer(o) for o in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                            f"but got size with types {[type(o) for o in size]}")
        size = (size,) * n if isinstance(size, (int, float)) else expand_param(size, n, "size")  # (a float: the
        # kernel's parser refuses it below, as PyTorch's list of it)
        scales = (None,) * n
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    else:
        scales = tuple(float(s) for s in (scale_factor if isinstance(scale_factor, (tuple, list)) else
                                          (scale_factor,) * n))
        if isinstance(scale_factor, (tuple, list)) and len(scales) != n:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(sp)} and scale_factor of shape {scale_factor}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        size = tuple(int(math.floor(s * f)) for s, f in zip(sp, scales))
        if recompute_scale_factor:
            scales = (None,) * n
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and n == 2:  # (PyTorch's 4-D lanczos checks its options; other ranks fail below)
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported; minigrad has {' | '.join(modes)}")
    need = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if n in (1, 2, 3) and isinstance(size[0], float) and need in (None, n) and mode in modes and \
            (mode != "bicubic" or n == 2):
        raise TypeError(_float_size_text(mode, n, size, antialias))
    if n not in (1, 2, 3) or (mode in ("bicubic", "lanczos") and n != 2):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if need is not None and n != need:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input")
    if mode != "area" and min(min(size), min(sp)) <= 0:  # (area's adaptive pooling takes an output of size 0)
        names = "DHW"[3 - n:]
        ins, outs = (", ".join(f"{c}: {v}" for c, v in zip(names, vals)) for vals in (sp, size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}) "
                           f"{'and ' if n == 1 else ''}output ({outs})")
    if min(size) < 0:
        raise RuntimeError(f"interpolate: output size must be positive, got {list(size)} for input of size "
                           f"{list(input.shape)}")
    if mode not in modes:  # (PyTorch's text for a mode it has no kernel for, after the size checks)
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if input.array.dtype == np.uint8:  # images: nearest selects (exact in any dtype); bilinear and bicubic as
        # PyTorch's uint8 kernels, in fixed point; PyTorch has no uint8 area or linear/trilinear
        if mode in ("bilinear", "bicubic"):
            return _resample_uint8(input, size, scales, mode, bool(align_corners), antialias)
        if mode == "area":
            raise NotImplementedError(f'"adaptive_avg_pool{"3d_cpu" if n == 3 else "2d"}" not implemented for \'Byte\'')
        if mode in ("linear", "trilinear"):
            raise NotImplementedError('"compute_indices_weights_linear" not implemented for \'Byte\'')
    if input.array.dtype.kind != "f" and not (input.array.dtype == np.uint8 and mode in ("nearest", "nearest-exact")):
        raise NotImplementedError(f'"interpolate" not implemented for {input.dtype}: pass a floating point tensor')
    if mode == "area":  # PyTorch's area mode is adaptive average pooling to the new size
        if n == 1:
            return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size[0])).squeeze(-2)
        return (adaptive_avg_pool2d if n == 2 else adaptive_avg_pool3d)(input, size)
    xp, dt = xp_of(input.array), input.array.dtype
    mats = tuple(_interp_matrix(s, o, mode, bool(align_corners), f, dt, antialias)
                 for s, o, f in zip(sp, size, scales))
    mats = tuple(a if isinstance(a, Nearest) else xp.asarray(a) for a in mats)
    return _UPSAMPLE[(mode + "-aa" if antialias else mode, n)].apply(input, mats)


def _float_size_text(mode, n, size, antialias):
    """PyTorch's parser's refusal of a float `size` (a list of it) by the kernel interpolate calls for `mode`."""
    if mode == "area":
        return (f"adaptive_avg_pool{n}d(): argument 'output_size' (position 2) must be tuple of ints, but found "
                "element of type float at pos 0")
    kind = {"nearest-exact": "_upsample_nearest_exact", "linear": "upsample_linear", "trilinear": "upsample_trilinear"}
    name = f"{'_' if antialias else ''}{kind.get(mode, 'upsample_' + mode)}{n}d{'_aa' if antialias else ''}"
    corners, bad = ("", "") if mode.startswith("nearest") else ("bool align_corners, ", "bool, ")
    types = ", ".join(type_name(o) for o in size)
    scales = "".join(f"float scales{'_' + d if n > 1 else ''} = None, " for d in "dhw"[3 - n:])
    return (f"{name}() received an invalid combination of arguments - got (Tensor, list, {bad}NoneType), but expected "
            f"one of:\n * (Tensor input, tuple of ints output_size, {corners}tuple of floats scale_factors)\n"
            f"      didn't match because some of the arguments have invalid types: (Tensor, !list of [{types}]!, "
            f"{bad}!NoneType!)\n * (Tensor input, tuple of ints output_size, {corners}{scales}*, Tensor out = None)\n")


# ---- adaptive max pooling: the windows' argmaxes found on the arrays, the values gathered by a recorded op --------
def _adaptive_bounds(n_in, n_out):
    """PyTorch's adaptive windows along one axis: output i covers [floor(i n_in / n_out), ceil((i + 1) n_in / n_out))."""
    return [((i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_max_indices(xd, size):
    """Each adaptive window's argmax as a flat index into its plane (or volume): an int64 array (*lead, *size)
    for xd (*lead, *spatial), PyTorch's choice (ties: the first; NaN wins: the window's last NaN). One numpy
    argmax per window: meant for small outputs."""
    xp = xp_of(xd)
    n = len(size)
    lead, spatial = xd.shape[:-n], xd.shape[-n:]
    idx = xp.zeros(lead + tuple(size), dtype=np.int64)
    bounds = [_adaptive_bounds(s, o) for s, o in zip(spatial, size)]
    for cell in itertools.product(*(range(o) for o in size)):
        box = [bounds[i][c] for i, c in enumerate(cell)]
        win = xd[(Ellipsis,) + tuple(slice(lo, hi) for lo, hi in box)]
        shape = win.shape[-n:]
        win = win.reshape(lead + (-1,))
        a = win.argmax(axis=-1)  # (numpy's argmax picks the first NaN: the windows with one are those it picked)
        if xd.dtype.kind == "f":
            has = xp.isnan(xp.take_along_axis(win, a[..., None], axis=-1)[..., 0])
            if has.any():
                a[has] = win.shape[-1] - 1 - xp.isnan(win[has])[..., ::-1].argmax(axis=-1)
        flat = 0
        for (lo, _), s, at in zip(box, spatial, xp.unravel_index(a, shape)):
            flat = flat * s + lo + at
        idx[(Ellipsis,) + cell] = flat
    return idx


def _adaptive_max_pool(input, output_size, return_indices, n, name):
    _check_output_rank(input, output_size)
    size = _adaptive_size(input, output_size, n, name)
    lead = tuple(input.shape[:-n])
    _check_adaptive_nonempty(input, name)
    if min(size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(lead + size)}")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {input.dtype}' if n == 2 else
                                  f'"{name}_cpu" not implemented for \'{input.dtype._legacy[:-6]}\'')
    y, idx = (AdaptiveMaxPool2D if n == 2 else AdaptiveMaxPool3D).apply(input, size)
    return (y, idx) if return_indices else y


class AdaptiveMaxPool2D(Function):
    node_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx, x, size):  # y[..., i, j] = x_flat[..., idx[..., i, j]], idx each window's (first) max
        xd = x.array
        n = len(size)
        lead, plane, cells = xd.shape[:-n], math.prod(xd.shape[-n:]), math.prod(size)
        if xd.size == 0 or cells == 0:
            idx = xp_of(xd).zeros(lead + size, dtype=np.int64)
        else:
            idx = _adaptive_max_indices(xd, size)
        y = np.take_along_axis(xd.reshape(lead + (plane,)), idx.reshape(lead + (cells,)), -1).reshape(lead + size)
        ctx.mark_non_differentiable(idx)
        ctx.save(indices=Tensor._wrap(idx))
        ctx.shape, ctx.dims = xd.shape, (lead, plane, cells)
        return y, idx

    @staticmethod
    def backward(ctx, g, _):  # each window's gradient to its max (overlapping windows add): gather's backward
        idx = ctx.saved_tensors[0]
        lead, plane, cells = ctx.dims
        flat = g.reshape(lead + (cells,))
        gx = flat.new_zeros(lead + (plane,)).scatter_add(-1, idx.reshape(lead + (cells,)), flat).reshape(ctx.shape)
        return second_order(ctx, gx) if minigrad.is_grad_enabled() else gx, None


class AdaptiveMaxPool3D(AdaptiveMaxPool2D):
    node_name = "AdaptiveMaxPool3DBackward0"


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over PyTorch's adaptive windows, giving exactly output_size (an int, a pair, None = keep).
    Shapes: (N, C, H, W) or (C, H, W) -> (N, C, *output_size); return_indices: also each max's flat index
    into its H x W plane (int64). One `AdaptiveMaxPool2DBackward0` node: the gradient goes to each window's
    max, and it differentiates twice (its backward is recorded ops)."""
    return _adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """adaptive_max_pool2d over (D, H, W): (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size); the indices
    are flat into the D x H x W volume."""
    return _adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d's values and indices, whatever return_indices says (PyTorch's)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool3d's values and indices, whatever return_indices says (PyTorch's)."""
    return adaptive_max_pool3d(input, output_size, True)
