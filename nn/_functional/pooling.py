"""max_pool2d, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d and interpolate (nearest, linear, bilinear).

The two window pools read the (padded) input through conv.py's `windows` view; their backward is
conv.py's col2im, an op of its own whose backward reads windows again (both pools differentiate twice).
max_pool2d runs on the backend's "max_pool2d" kernel where one takes the input (the CPU's compiled
loop: minigrad/backends/cpu/max_pool.py), forward and first backward; a create_graph backward is the
recorded op (MaxPoolScatter) either way.
adaptive_avg_pool2d and interpolate are linear maps acting on each spatial axis
alone: y = A_h x A_w^T with small dense matrices (an averaging or a selection or an interpolation
matrix per axis), one node `Separable` whose backward is the same op with the transposed matrices,
so it is differentiable twice. The matrices cost O(out * in) per axis: meant for feature maps of a
few hundred pixels a side, not for resizing photographs.
"""
import math

import numpy as np

import minigrad
from minigrad import backends
from minigrad.ops.array_op import array_op

from ._common import Function, Tensor, check_tensor, xp_of
from .conv import col2im, crop, expand_param, pad_array, windows


def _pool_args(input, kernel_size, stride, padding, dilation, name):
    check_tensor(input, "input", name)
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError(f"{name}: non-empty 3D or 4D (batch mode) tensor expected for input, got size "
                           f"{list(input.shape)}")
    kernel = expand_param(kernel_size, 2, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        expand_param(stride, 2, "stride")
    padding, dilation = expand_param(padding, 2, "padding"), expand_param(dilation, 2, "dilation")
    if min(kernel) <= 0 or min(stride) <= 0 or min(dilation) <= 0:
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than zero, but got "
                           f"kernel_size={list(kernel)}, stride={list(stride)}, dilation={list(dilation)}")
    if min(padding) < 0 or any(p > k // 2 for p, k in zip(padding, kernel)):  # half the kernel, whatever the dilation
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {padding[1]}, "
                           f"padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    return kernel, stride, padding, dilation


def _pool_geometry(shape, kernel, stride, padding, dilation, ceil_mode):
    """(out sizes, pads ((lo, hi), ...)): PyTorch's output size; with ceil_mode a last, partial window is
    kept if it starts inside the input or its left padding, and the right pad grows to hold it."""
    out, pads = [], []
    for s, k, st, p, d in zip(shape[-2:], kernel, stride, padding, dilation):
        span = s + 2 * p - d * (k - 1) - 1
        o = (-(-span // st) if ceil_mode else span // st) + 1
        if ceil_mode and (o - 1) * st >= s + p:
            o -= 1
        out.append(o)
        pads.append((p, max(p, (o - 1) * st + d * (k - 1) + 1 - s - p)))
    if min(out) <= 0:
        c = shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{shape[-2]}x{shape[-1]}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")
    return tuple(out), tuple(pads)


def _tiling(kernel, stride):
    """Whether the windows tile the (padded) input: stride == kernel (no dilation), so no two overlap."""
    return tuple(stride) == tuple(kernel)


def _tiles(acc, kernel, out):
    """The view (N, C, oh, kh, ow, kw) of acc's top-left oh*kh x ow*kw corner: tiling windows, each [.., i, :, j, :]."""
    (kh, kw), (oh, ow) = kernel, out
    return acc[:, :, :oh * kh, :ow * kw].reshape(acc.shape[:2] + (oh, kh, ow, kw))  # splitting axes: a view


class MaxPool2d(Function):
    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, dilation, padding, pads, out):
        # y = the max of each window and where it is as a flat index into the plane, PyTorch's: NaN wins (the
        # window's last NaN), ties go to the first in scan order, a window of -infs to its first element
        xd = x.array if x.array.ndim == 4 else x.array[None]  # an unbatched (C, H, W) input as one sample
        ctx.pool, ctx.padding = (kernel, stride, dilation, pads, out, xd.shape), padding
        ctx.impl = backends.find("max_pool2d", xd, kernel, stride, dilation, padding, out)
        if ctx.impl is not None:
            y, idx = ctx.impl.forward(xd, kernel, stride, dilation, padding, out)
            ctx.arg, ctx.idx = None, idx  # (the window offsets MaxPoolScatter takes: from idx, if asked)
        else:
            xp = xp_of(xd)
            low = -np.inf if xd.dtype.kind == "f" else np.iinfo(xd.dtype).min
            v = windows(pad_array(xd, pads, low), kernel, stride, dilation, out)
            flat = v.reshape(v.shape[:4] + (-1,))  # (N, C, oh, ow, kh * kw): a copy
            arg = flat.argmax(axis=-1)
            y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
            bad = ~(y > low)  # a NaN (argmax took the first), or nothing above the padding: PyTorch's choice
            if bad.any():
                arg = _torch_argmax(flat, arg, bad, kernel, stride, dilation, padding, xp)
                y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
            ctx.arg = arg
            idx = _flat_indices(arg, kernel, stride, dilation, padding, xd.shape[-1], xp)
        return (y, idx) if x.array.ndim == 4 else (y[0], idx[0])

    @staticmethod
    def backward(ctx, g, _):  # each window's gradient goes to its max
        if ctx.impl is not None and not minigrad.is_grad_enabled():  # (create_graph: the recorded op)
            gd = g.array if g.array.ndim == 4 else g.array[None]
            gx = ctx.impl.backward(gd, ctx.idx, ctx.pool[-1])
            return Tensor(gx if g.array.ndim == 4 else gx[0]), None, None, None, None, None, None
        if ctx.arg is None:
            ctx.arg = _window_offsets(ctx.idx, ctx.pool, ctx.padding)
        return MaxPoolScatter.apply(g, ctx.arg, ctx.pool), None, None, None, None, None, None


def _torch_argmax(flat, arg, bad, kernel, stride, dilation, padding, xp):
    """The window argmaxes (N, C, oh, ow) where PyTorch's loop differs from numpy's argmax (windows `bad`):
    PyTorch's last NaN of a window where it has one, else (nothing above the padding's value) the window's
    first element inside the input."""
    (kh, kw), (oh, ow) = kernel, arg.shape[-2:]
    first = []  # per axis, each window's first kernel offset inside the input: ceil((p - o s) / d), at least 0
    for o, s, p, d in zip((oh, ow), stride, padding, dilation):
        before = p - xp.arange(o) * s
        first.append(xp.where(before > 0, -(-before // d), 0))
    arg = xp.where(bad, first[0][:, None] * kw + first[1][None, :], arg)
    if flat.dtype.kind == "f":
        nan = xp.isnan(flat)
        last = kh * kw - 1 - nan[..., ::-1].argmax(axis=-1)
        arg = xp.where(nan.any(axis=-1), last, arg)
    return arg


def _window_offsets(idx, pool, padding):
    """Flat indices into the plane (N, C, oh, ow) -> each window's kernel offset kr * kW + kc (_flat_indices's
    inverse), the argmaxes MaxPoolScatter takes."""
    kernel, stride, dilation, _, out, shape = pool
    xp = xp_of(idx)
    rows, cols = idx // shape[-1], idx % shape[-1]
    kr = (rows - (xp.arange(out[0]) * stride[0] - padding[0])[:, None]) // dilation[0]
    kc = (cols - (xp.arange(out[1]) * stride[1] - padding[1])[None, :]) // dilation[1]
    return kr * kernel[1] + kc


# max_pool2d's backward, and that backward's own: adding each window's value at its argmax, and reading the
# value at each window's argmax, are adjoint linear maps (with the argmaxes fixed): each one's backward is the
# other, so max_pool2d differentiates twice
class MaxPoolScatter(Function):
    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, g, arg, pool):  # window values (N, C, oh, ow) -> added at their argmax in (N, C, H, W)
        kernel, stride, dilation, pads, out, shape = pool
        gd = g.array.reshape(arg.shape)
        xp = xp_of(gd)
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        zero = gd.dtype.type(0)
        # gx = sum over kernel offsets k of g where the argmax is k, added at the offset's window positions
        acc = col2im(lambda k: xp.where(arg == k[0] * kernel[1] + k[1], gd, zero), shape[:2], padded, kernel, stride,
                     dilation, out, gd.dtype, xp)
        gx = xp.ascontiguousarray(crop(acc, pads, shape[2:]))
        ctx.arg, ctx.pool, ctx.unbatched = arg, pool, g.array.ndim == 3
        return gx[0] if ctx.unbatched else gx

    @staticmethod
    def backward(ctx, gg):
        return MaxPoolGather.apply(gg, ctx.arg, ctx.pool), None, None


class MaxPoolGather(Function):
    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, x, arg, pool):  # (N, C, H, W) -> the value at each window's argmax (N, C, oh, ow)
        kernel, stride, dilation, pads, out, shape = pool
        xd = x.array.reshape(shape)
        v = windows(pad_array(xd, pads), kernel, stride, dilation, out)
        y = xp_of(xd).take_along_axis(v.reshape(v.shape[:4] + (-1,)), arg[..., None], axis=-1)[..., 0]
        ctx.arg, ctx.pool = arg, pool
        return y[0] if x.array.ndim == 3 else y

    @staticmethod
    def backward(ctx, g):
        return MaxPoolScatter.apply(g, ctx.arg, ctx.pool), None, None


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each kH x kW window. Shapes: input (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out),
    H_out = (H + 2p - d (kH - 1) - 1) / s + 1 rounded down (up with ceil_mode); stride defaults to the
    kernel; padding (at most half the kernel) never wins. return_indices: also the argmax of each window
    as a flat index into its H x W plane (int64). One `MaxPool2DWithIndicesBackward0` node."""
    kernel, stride, padding, dilation = _pool_args(input, kernel_size, stride, padding, dilation, "max_pool2d")
    out, pads = _pool_geometry(input.shape, kernel, stride, padding, dilation, ceil_mode)
    y, idx = MaxPool2d.apply(input, kernel, stride, dilation, padding, pads, out)
    # the indices the caller gets are a copy: the kernel's backward reads the node's own, which an in-place
    # edit of the returned ones would otherwise change (an op's copy: a minigrad.compile replay copies each call's)
    return (y, array_op(lambda a: a.copy(), idx)) if return_indices else y


def _flat_indices(arg, kernel, stride, dilation, padding, width, xp):
    """Window argmaxes (N, C, oh, ow) in [0, kH kW) -> flat positions row * W + col in the input plane."""
    oh, ow = arg.shape[-2:]
    rows = (xp.arange(oh) * stride[0] - padding[0])[:, None] + (arg // kernel[1]) * dilation[0]
    cols = (xp.arange(ow) * stride[1] - padding[1])[None, :] + (arg % kernel[1]) * dilation[1]
    return (rows * width + cols).astype(np.int64)


class AvgPool2d(Function):
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, out, divisor):  # y = sum of each window / divisor
        xd = x.array if x.array.ndim == 4 else x.array[None]  # an unbatched (C, H, W) input as one sample
        v = windows(pad_array(xd, pads), kernel, stride, (1, 1), out)
        ctx.pool = kernel, stride, pads, out, xd.shape, divisor
        y = v.sum(axis=(-2, -1)) / divisor
        return y if x.array.ndim == 4 else y[0]

    @staticmethod
    def backward(ctx, g):  # every element of a window gets g / divisor
        return AvgPoolAdjoint.apply(g, ctx.pool), None, None, None, None, None


class AvgPoolAdjoint(Function):
    """avg_pool2d's backward as an op of its own; its backward is avg_pool2d again (both linear)."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, g, pool):
        kernel, stride, pads, out, shape, divisor = pool
        gd = g.array.reshape(shape[:2] + tuple(out)) / divisor
        xp = xp_of(gd)
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        if _tiling(kernel, stride):  # no overlap: every element of a window's tile is its g / divisor
            acc = xp.zeros(tuple(shape[:2]) + padded, dtype=gd.dtype)
            _tiles(acc, kernel, out)[...] = gd[:, :, :, None, :, None]
        else:
            acc = col2im(lambda k: gd, shape[:2], padded, kernel, stride, (1, 1), out, gd.dtype, xp)
        gx = xp.ascontiguousarray(crop(acc, pads, shape[2:]))
        ctx.pool = pool
        return gx if g.array.ndim == 4 else gx[0]

    @staticmethod
    def backward(ctx, gg):
        kernel, stride, pads, out, shape, divisor = ctx.pool
        return AvgPool2d.apply(gg, kernel, stride, pads, out, divisor), None


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean over each kH x kW window. Shapes as max_pool2d. The divisor is the window's size clipped to
    the padded input (count_include_pad) or to the input itself, or `divisor_override`. One
    `AvgPool2DBackward0` node."""
    kernel, stride, padding, _ = _pool_args(input, kernel_size, stride, padding, 1, "avg_pool2d")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"avg_pool2d" not implemented for {input.dtype}: pass a floating point tensor')
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input
    out, pads = _pool_geometry(x.shape, kernel, stride, padding, (1, 1), ceil_mode)
    xp = xp_of(x.array)
    if divisor_override is not None:
        divisor = float(divisor_override)
    else:
        counts = []
        for s, k, st, p, o in zip(x.shape[-2:], kernel, stride, padding, out):
            start = np.arange(o) * st - p
            end = np.minimum(start + k, s + p)
            counts.append(end - start if count_include_pad else np.minimum(end, s) - np.maximum(start, 0))
        divisor = xp.asarray(np.outer(counts[0], counts[1]), dtype=x.array.dtype)
    return AvgPool2d.apply(x, kernel, stride, pads, out, divisor)


# ---- separable linear maps: adaptive average pooling and interpolation ------------------------------------
class Separable(Function):
    """y = x with matrix A_i applied along each of the last len(mats) axes (A_i of shape (out_i, in_i))."""

    node_name = "SeparableBackward0"

    @staticmethod
    def forward(ctx, x, mats):
        y = x.array
        xp = xp_of(y)
        n = len(mats)
        for i, a in enumerate(mats):
            ax = y.ndim - n + i
            if ax == y.ndim - 1:
                y = xp.matmul(y, a.T)
            elif ax == y.ndim - 2:
                y = xp.matmul(a, y)
            else:
                y = xp.moveaxis(xp.matmul(xp.moveaxis(y, ax, -1), a.T), -1, ax)
        ctx.mats = mats
        return xp.ascontiguousarray(y)

    @staticmethod
    def backward(ctx, g):  # the adjoint: the transposed matrices (itself a Separable: twice differentiable)
        return type(ctx)._forward_cls.apply(g, tuple(a.T for a in ctx.mats)), None


def _separable(node_name):
    return type(node_name.replace("Backward0", ""), (Separable,), {"node_name": node_name, "__module__": __name__})


AdaptiveAvgPool2d = _separable("AdaptiveAvgPool2DBackward0")
_UPSAMPLE = {(mode, n): _separable(f"Upsample{name}{n}DBackward0") for mode, name in
             (("nearest", "Nearest"), ("nearest-exact", "NearestExact")) for n in (1, 2, 3)}
_UPSAMPLE.update({("linear", 1): _separable("UpsampleLinear1DBackward0"),
                  ("bilinear", 2): _separable("UpsampleBilinear2DBackward0"),
                  ("trilinear", 3): _separable("UpsampleTrilinear3DBackward0")})


def _average_matrix(n_in, n_out, dtype):  # row i averages [floor(i n_in / n_out), ceil((i + 1) n_in / n_out))
    a = np.zeros((n_out, n_in), dtype=dtype)
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def adaptive_avg_pool2d(input, output_size):
    """Averages over PyTorch's adaptive windows, giving exactly output_size (an int, a pair, None = keep).
    Shapes: (N, C, H, W) or (C, H, W) -> (N, C, *output_size). One `AdaptiveAvgPool2DBackward0` node."""
    check_tensor(input, "input", "adaptive_avg_pool2d")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    size = tuple(s if o is None else int(o) for o, s in zip(output_size, input.shape[-2:]))
    if min(size) < 0 or (min(size) == 0 and input.numel()):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {list(size)}")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for {input.dtype}')
    xp, dt = xp_of(input.array), input.array.dtype
    mats = tuple(xp.asarray(_average_matrix(s, o, dt)) for s, o in zip(input.shape[-2:], size))
    return AdaptiveAvgPool2d.apply(input, mats)


def _interp_matrix(n_in, n_out, mode, align_corners, scale, dtype):
    """(n_out, n_in): PyTorch's source position of each output pixel, as a selection (nearest) or the two
    neighbours' weights (linear). `scale`: the user's scale_factor (PyTorch then uses 1/scale, not n_in/n_out)."""
    a = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    ratio = (1.0 / scale) if scale else n_in / n_out
    if mode in ("nearest", "nearest-exact"):  # the pixel left of the source position, or (exact) its centre's
        src = np.minimum(np.floor((rows + (0.5 if mode == "nearest-exact" else 0.0)) * ratio).astype(np.int64),
                         n_in - 1)
        a[rows, src] = 1.0
        return a
    if align_corners:
        pos = rows * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:
        pos = np.maximum((rows + 0.5) * ratio - 0.5, 0.0)
    lo = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    w = pos - lo
    np.add.at(a, (rows, lo), 1.0 - w)
    np.add.at(a, (rows, hi), w)
    return a


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize the spatial dims: mode 'nearest' or 'nearest-exact' (3-D, 4-D or 5-D input), 'linear' (3-D),
    'bilinear' (4-D) or 'trilinear' (5-D), with PyTorch's pixel geometry (align_corners for the linear
    modes). Give `size` (an int or one per spatial dim) or `scale_factor`. Shapes: (N, C, L), (N, C, H, W)
    or (N, C, D, H, W) -> the same with the new sizes. One `UpsampleNearest2DBackward0` /
    `UpsampleBilinear2DBackward0` / ... node."""
    check_tensor(input, "input", "interpolate")
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear")
    if mode not in modes:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported; minigrad has {' | '.join(modes)}")
    if align_corners is not None and mode.startswith("nearest"):
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    n = input.ndim - 2
    need = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if n not in (1, 2, 3) or (need is not None and n != need):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{'3D, 4D or 5D' if need is None else f'{need + 2}D'} input")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None else
                         "either size or scale_factor should be defined")
    sp = tuple(input.shape[2:])
    if size is not None:
        size = expand_param(size, n, "size") if not isinstance(size, int) else (size,) * n
        scales = (None,) * n
    else:
        scales = tuple(float(s) for s in (scale_factor if isinstance(scale_factor, (tuple, list)) else
                                          (scale_factor,) * n))
        if len(scales) != n:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(sp)} and scale_factor of shape {list(scale_factor)}.")
        size = tuple(int(math.floor(s * f)) for s, f in zip(sp, scales))
        if recompute_scale_factor:
            scales = (None,) * n
    if min(size) <= 0:
        raise RuntimeError(f"interpolate: output size must be positive, got {list(size)} for input of size "
                           f"{list(input.shape)}")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"interpolate" not implemented for {input.dtype}: pass a floating point tensor')
    xp, dt = xp_of(input.array), input.array.dtype
    mats = tuple(xp.asarray(_interp_matrix(s, o, mode, bool(align_corners), f, dt))
                 for s, o, f in zip(sp, size, scales))
    return _UPSAMPLE[(mode, n)].apply(input, mats)


# ---- adaptive max pooling: the windows' argmaxes found on the arrays, the values gathered by a recorded op --------
def _adaptive_bounds(n_in, n_out):
    """PyTorch's adaptive windows along one axis: output i covers [floor(i n_in / n_out), ceil((i + 1) n_in / n_out))."""
    return [((i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_max_indices(xd, size):
    """Each adaptive window's argmax as a flat index row * W + col into its H x W plane: an int64 array
    (*lead, oh, ow) for xd (*lead, H, W), PyTorch's choice (ties: the first; NaN wins: the window's last
    NaN). One numpy argmax per window: meant for small outputs."""
    xp = xp_of(xd)
    H, W = xd.shape[-2:]
    idx = xp.zeros(xd.shape[:-2] + tuple(size), dtype=np.int64)
    for i, (r0, r1) in enumerate(_adaptive_bounds(H, size[0])):
        for j, (c0, c1) in enumerate(_adaptive_bounds(W, size[1])):
            win = xd[..., r0:r1, c0:c1].reshape(xd.shape[:-2] + (-1,))
            a = win.argmax(axis=-1)  # (numpy's argmax picks the first NaN)
            if xd.dtype.kind == "f":
                nan = xp.isnan(win)
                a = xp.where(nan.any(axis=-1), win.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1), a)
            idx[..., i, j] = (r0 + a // (c1 - c0)) * W + c0 + a % (c1 - c0)
    return idx


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over PyTorch's adaptive windows, giving exactly output_size (an int, a pair, None = keep).
    Shapes: (N, C, H, W) or (C, H, W) -> (N, C, *output_size); return_indices: also each max's flat index
    into its H x W plane (int64). The values are a `gather` of the input at those indices (one
    `GatherBackward0` node: the gradient goes to each window's max, and it differentiates twice)."""
    check_tensor(input, "input", "adaptive_max_pool2d")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    size = tuple(s if o is None else int(o) for o, s in zip(output_size, input.shape[-2:]))
    if min(size) < 0:
        raise RuntimeError(f"adaptive_max_pool2d(): elements of output_size must be greater than or equal to 0 but "
                           f"received {list(size)}")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'"adaptive_max_pool2d" not implemented for {input.dtype}')
    lead = tuple(input.shape[:-2])
    if input.numel() == 0 or min(size) == 0:
        idx = Tensor(xp_of(input.array).zeros(lead + size, dtype=np.int64))
    else:  # (an op of the input's array: a minigrad.compile replay finds each call's own maxima)
        idx = array_op(lambda a: _adaptive_max_indices(a, size), input)
    # y[..., i, j] = x_flat[..., idx[..., i, j]]
    index = idx.reshape(lead + (-1,))
    y = input.reshape(lead + (-1,)).gather(-1, index).reshape(lead + size)
    return (y, idx) if return_indices else y
