"""conv1d/2d/3d and conv_transpose1d/2d/3d through im2col: one ConvolutionBackward0 node each.

im2col: every window of the zero-padded input is a column of one matrix, read through an
`as_strided` view of the input (no loop) and copied once; the convolution is then one matrix
product per group. col2im is its adjoint: it adds each kernel offset's slab of columns back into
the input's shape (prod(kernel_size) strided adds: 9 for 3x3). A convolution, its gradient in the
input (= conv_transpose2d's forward) and its gradient in the weight are three linear maps, each a
Function on raw arrays (numpy or cupy) whose backward applies the other two: differentiable twice.

Layout: the convolutions hold their arrays batch last, (C, *spatial, N), and the columns as
(C * prod(kernel), prod(out) * N). Every copy and every strided add then runs along N (and along
whole rows of N * width when the stride is 1), not along a row of a few output pixels, which is
what numpy's loops cost per call for a small CNN's 7x7 maps. The products take the positions as
their long side: y^T = cols^T w^T, gw^T = cols g^T, gcols = w^T g (the faster forms for OpenBLAS
when one side is a few channels).
"""
import itertools


from minigrad import backends
from minigrad._warn_once import warn_once
from minigrad.autograd.function import keep_absent_edges
from minigrad.dtypes import cpp_name, from_numpy_dtype, promote_types, type_text

from ._common import Function, check_tensor, wrap, xp_of


# ---- the two moves: windows as columns, columns back into windows ------------------------------------
def as_strided(a, shape, strides):
    xp = xp_of(a)
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def out_size(size, k, s, d, lo, hi):
    """Windows of kernel k, stride s and dilation d along a dim of `size` padded by lo and hi."""
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def windows(a, kernel, stride, dilation, out, lead=2):
    """View of a (*B, *spatial, *T) (`lead` dims B) as (*B, *out, *T, *kernel): element [b, o, t, k] =
    a[b, o*s + k*d, t]."""
    n = len(kernel)
    st = a.strides
    sp = st[lead:lead + n]
    return as_strided(a, a.shape[:lead] + tuple(out) + a.shape[lead + n:] + tuple(kernel),
                      st[:lead] + tuple(sp[i] * stride[i] for i in range(n)) + st[lead + n:]
                      + tuple(sp[i] * dilation[i] for i in range(n)))


def pad_array(a, pads, value=0.0):
    """a (B0, B1, *spatial) with pads ((lo, hi), ...) per spatial dim filled with `value` (no copy if none)."""
    if not any(lo or hi for lo, hi in pads):
        return a
    xp = xp_of(a)
    out = xp.full(a.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(a.shape[2:], pads)), value, dtype=a.dtype)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(a.shape[2:], pads))] = a
    return out


def batch_last(a, pads):
    """a (N, C, *spatial) -> (C, *padded, N), zero-padded by pads ((lo, hi), ...): one copy."""
    xp = xp_of(a)
    moved = xp.moveaxis(a, 0, -1)
    impl = backends.find("batch_last", a)
    # (a compiled copy by tiles, where numpy's reads C * H * W apart, a stride that aliases in the cache;
    # with padding too: the tiled copy then a contiguous one into the zeros beats the one strided copy)
    if impl is not None:
        moved = impl.forward(a)
    if not any(lo or hi for lo, hi in pads):
        return moved if impl is not None else xp.ascontiguousarray(moved)
    out = xp.zeros((a.shape[1],) + tuple(s + lo + hi for s, (lo, hi) in zip(a.shape[2:], pads)) + (a.shape[0],),
                   dtype=a.dtype)
    out[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(a.shape[2:], pads))] = moved
    return out


def batch_first(a):
    """(C, *spatial, N) -> (N, C, *spatial), contiguous: batch_last's inverse (without the padding)."""
    return xp_of(a).ascontiguousarray(xp_of(a).moveaxis(a, -1, 0))


def im2col(a, kernel, stride, dilation, out):
    """a (C, *spatial, N), already padded -> columns (C * prod(kernel), prod(out) * N): rows (c, *k), columns
    (*out, n), element [(c, k), (o, n)] = a[c, o*s + k*d, n]."""
    n = len(kernel)
    v = windows(a, kernel, stride, dilation, out, lead=1)  # (C, *out, N, *k)
    order = (0,) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(1, 2 + n))  # (C, *k, *out, N)
    cols = xp_of(a).ascontiguousarray(v.transpose(order))
    return cols.reshape(cols.shape[0] * _prod(kernel), -1)


def columns(a, pads, kernel, stride, dilation, out):
    """a (N, C, *spatial) -> im2col of it moved batch last and zero-padded by pads: (C * prod(kernel), prod(out) * N)."""
    impl = backends.find("im2col", a, kernel)
    if impl is not None:  # (compiled: the move, the padding and the windows in one pass, channel by channel)
        return impl.forward(a, pads, kernel, stride, dilation, out)
    return im2col(batch_last(a, pads), kernel, stride, dilation, out)


def col2im(piece, lead, padded, kernel, stride, dilation, out, dtype, xp, trail=()):
    """zeros(lead + padded + trail) with, for each kernel offset k, piece(k) (shape lead + out + trail) added
    at the window positions o*s + k*d: the adjoint of reading windows."""
    acc = xp.zeros(tuple(lead) + tuple(padded) + tuple(trail), dtype=dtype)
    for k in itertools.product(*(range(kk) for kk in kernel)):
        at = tuple(slice(ki * d, ki * d + s * (o - 1) + 1, s) for ki, d, s, o in zip(k, dilation, stride, out))
        acc[(slice(None),) * len(lead) + at] += piece(k)
    return acc


def crop(a, pads, sizes, lead=2):
    """The inverse of pad_array: the middle `sizes` of a (*B, *padded, *T) (`lead` dims B)."""
    if not any(lo or hi for lo, hi in pads):
        return a
    return a[(slice(None),) * lead + tuple(slice(lo, lo + s) for (lo, _), s in zip(pads, sizes))]


def grouped_matmul(a, b):
    """a (G, m, k) @ b (G, k, n) -> (G, m, n) as G plain 2-D products (numpy's stacked matmul is slower)."""
    impl = backends.find("grouped_matmul", a, b)
    if impl is not None:
        return impl.forward(a, b)
    xp = xp_of(a)
    out = xp.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=xp.result_type(a, b))
    for i in range(a.shape[0]):
        xp.matmul(a[i], b[i], out=out[i])
    return out


def _height_one(kernel, a):
    """A 1-d conv's array (N, C, L) as a 2-d conv's of height 1, (N, C, 1, L), and the prefixes that make its
    kernel, strides (and pads) 2-d: so the 2-d kernels, image by image, take 1-d convs too (faster than the
    general path's batch-wide columns for a text CNN's shapes). Other arrays unchanged, empty prefixes."""
    if len(kernel) != 1:
        return a, (), ()
    return a[:, :, None], (1,), ((0, 0),)


def _prod(t):
    n = 1
    for v in t:
        n *= v
    return n


# ---- convolution ------------------------------------------------------------------------------------------
# Three linear maps, each the others' adjoints: Convolution (y from x and w), ConvolutionTranspose (its
# gradient in x) and ConvolutionWeight (its gradient in w). Each one's backward calls the other two through
# apply, so the gradients are recorded ops themselves and create_graph=True differentiates them again.
def _weight_grad_arrays(xd, gd, kernel, stride, pads, dilation, groups):
    """sum_{n, p} g[n, o, p] x_pad[n, c, p*s + k*d]: x (N, C, *in), g (N, O, *out) -> (O, C/G, *kernel)."""
    xp = xp_of(gd)
    O, out = gd.shape[1], gd.shape[2:]
    if gd.shape[0] == 0:  # an empty batch adds nothing (and im2col cannot size its columns from no elements)
        return xp.zeros((O, xd.shape[1] // groups) + tuple(kernel), dtype=gd.dtype)
    x4, one, no_pad = _height_one(kernel, xd)
    g4 = _height_one(kernel, gd)[0]
    impl = backends.find("depthwise_conv", x4, g4, xd.shape[1], O, groups, kernel, out)
    if impl is not None:  # (compiled: each channel's sums over its rows, no columns)
        gw = impl.weight_grad(x4, g4, one + kernel, one + stride, no_pad + pads, one + dilation)
        return gw.reshape((O, 1) + tuple(kernel))
    # (g takes the checks of w; the weight gradient's rule, not the forward's)
    impl = backends.find("conv_forward", x4, g4, groups, one + kernel, one + out, one + stride, False)
    if impl is not None:  # (compiled, image by image: each image's columns made in the cache, no moves)
        gw = impl.backward(x4, g4, one + kernel, one + stride, no_pad + pads, one + dilation)
        return gw.reshape((O, xd.shape[1]) + tuple(kernel))
    cols = columns(xd, pads, kernel, stride, dilation, out)  # (C * K, L * N)
    # (g^T as a copy: BLAS on its transposed view, g batch last, rounds some shapes' sums otherwise)
    g3 = gd.reshape(gd.shape[0], O, -1)
    impl = backends.find("conv_output", g3)
    if impl is not None:  # (the compiled copy's inverse: numpy's reads O rows that may alias in the cache)
        gt = impl.backward(g3)
    else:
        gt = xp.ascontiguousarray(xp.moveaxis(g3, (0, 1), (-2, -1)))
    gt = gt.reshape(-1, groups, O // groups)  # (L * N, G, O/G)
    gwt = grouped_matmul(cols.reshape(groups, -1, cols.shape[1]), gt.transpose(1, 0, 2))  # gw^T: (G, C/G * K, O/G)
    return xp.ascontiguousarray(gwt.transpose(0, 2, 1)).reshape((O, xd.shape[1] // groups) + tuple(kernel))


def _bias_grad(g):
    return g.sum(dim=(0,) + tuple(range(2, g.ndim)))


def _fit(t, spatial):
    """t's leading `spatial` positions: as a transposed convolution's adjoint, a convolution also sees the rows
    output_padding added (when output_padding >= stride), which no input position reached."""
    if tuple(t.shape[2:]) == tuple(spatial):
        return t
    return t[(slice(None), slice(None)) + tuple(slice(0, s) for s in spatial)]


def _conv_arrays(xd, wd, stride, pads, dilation, groups, bias=None):
    """y[n, o, p] = sum_{c in o's group, k} w[o, c, k] x_pad[n, c, p*s + k*d] (+ bias[o]): x (N, C, *in), w (O, C/G,
    *k), bias (O,) or None."""
    xp = xp_of(xd)
    N, O, kernel = xd.shape[0], wd.shape[0], wd.shape[2:]
    out = tuple(out_size(s, k, st, d, lo, hi) for s, k, st, d, (lo, hi) in
                zip(xd.shape[2:], kernel, stride, dilation, pads))
    if N == 0:  # (im2col cannot size its columns from no elements)
        return xp.zeros((N, O) + out, dtype=xd.dtype)
    x4, one, no_pad = _height_one(kernel, xd)
    w4 = _height_one(kernel, wd)[0]
    impl = backends.find("depthwise_conv", x4, w4, xd.shape[1], O, groups, kernel, out)
    if impl is not None:  # (compiled: each output row summed in place, no columns; the bias its start)
        return impl.forward(x4, w4, one + stride, no_pad + pads, one + dilation, one + out, bias).reshape((N, O) + out)
    impl = backends.find("conv_forward", x4, w4, groups, one + kernel, one + out, one + stride)
    if impl is not None:  # (compiled, image by image: each image's columns made in the cache, no moves; the bias
        # added as y is written)
        return impl.forward(x4, w4, one + stride, no_pad + pads, one + dilation, one + out, bias).reshape((N, O) + out)
    y = _conv_general(xd, wd, stride, pads, dilation, groups, out)
    if bias is not None:
        y += bias.reshape((O,) + (1,) * len(out))
    return y


def _conv_general(xd, wd, stride, pads, dilation, groups, out):
    xp = xp_of(xd)
    N, O, kernel = xd.shape[0], wd.shape[0], wd.shape[2:]
    cols = columns(xd, pads, kernel, stride, dilation, out)  # (C * K, L * N)
    # y^T = cols^T w^T per group: (G, L * N, O/G), the positions as the product's long side
    yt = grouped_matmul(cols.reshape(groups, -1, cols.shape[1]).transpose(0, 2, 1),
                        wd.reshape(groups, O // groups, -1).transpose(0, 2, 1))
    impl = backends.find("conv_output", yt[0].reshape(-1, N, O)) if groups == 1 else None
    if impl is not None:  # (a compiled copy, where numpy's of the transposed view reads O apart)
        return impl.forward(yt[0].reshape(-1, N, O)).reshape((N, O) + out)
    return xp.ascontiguousarray(xp.moveaxis(yt.transpose(1, 0, 2).reshape(out + (N, O)), (-2, -1), (0, 1)))


class Convolution(Function):
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, stride, pads, dilation, groups):
        xd, wd = x.array, w.array
        y = _conv_arrays(xd, wd, stride, pads, dilation, groups, None if b is None else b.array)
        ctx.save(input=x if ctx.needs_input_grad[1] else None, weight=w if ctx.needs_input_grad[0] else None)
        ctx.conv = stride, pads, dilation, groups, xd.shape[2:], wd.shape[2:]
        return y

    @staticmethod
    def backward(ctx, g):  # gx = conv_transpose(g, w),  gw = sum g x_windows,  gb = sum g
        x, w = ctx.saved_tensors
        stride, pads, dilation, groups, in_sp, kernel = ctx.conv
        needs = ctx.needs_input_grad
        gx = ConvolutionTranspose.apply(g, w, None, stride, pads, dilation, groups, in_sp) if needs[0] else None
        gw = ConvolutionWeight.apply(x, g, kernel, stride, pads, dilation, groups) if needs[1] else None
        gb = _bias_grad(g) if len(needs) > 2 and needs[2] else None
        return gx, gw, gb, None, None, None, None


def _input_grad(gd, wd, x_shape, pads, kernel, stride, dilation, out, groups):
    """col2im(w^T g): g (N, O, *out), w (O, C/G, *k) -> gx of x_shape (N, C, *spatial)."""
    xp = xp_of(gd)
    N, C = x_shape[:2]
    O = wd.shape[0]
    g4, one, no_pad = _height_one(kernel, gd)
    w4 = _height_one(kernel, wd)[0]
    impl = backends.find("depthwise_conv", g4, w4, C, O, groups, kernel, out)
    if impl is not None:  # (compiled: each output row added back in place, no columns and no col2im)
        gx = impl.input_grad(g4, w4, x_shape[:2] + one + tuple(x_shape[2:]), one + stride, no_pad + pads,
                             one + dilation, one + out)
        return gx.reshape(x_shape)
    impl = backends.find("conv_input_grad", g4, w4, groups, one + kernel)
    if impl is not None:  # (compiled, image by image: each image's columns made in the cache, no moves)
        gx = impl.forward(g4, w4, x_shape[:2] + one + tuple(x_shape[2:]), one + kernel, one + stride,
                          one + dilation, no_pad + pads, one + out)
        return gx.reshape(x_shape)
    g2 = batch_last(gd, ((0, 0),) * len(kernel)).reshape(groups, O // groups, -1)  # (G, O/G, L * N)
    gcols = grouped_matmul(wd.reshape(groups, O // groups, -1).transpose(0, 2, 1), g2)  # (G, C/G * K, L * N)
    gcols = gcols.reshape((C,) + tuple(kernel) + tuple(out) + (N,))
    impl = backends.find("col2im", gcols, kernel) if len(kernel) == 2 else None
    if impl is not None:  # (compiled: the adds, the crop and the move batch first in one pass)
        return impl.forward(gcols.reshape(C * _prod(kernel), -1), x_shape, kernel, stride, dilation, pads, out)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x_shape[2:], pads))
    acc = col2im(lambda k: gcols[(slice(None),) + k], (C,), padded, kernel, stride, dilation, out, gd.dtype, xp,
                 trail=(N,))  # (C, *padded, N)
    return batch_first(crop(acc, pads, x_shape[2:], lead=1))


SPREAD = 4  # output positions per input position from which a transposed conv takes col2im


def _as_correlation(wd, groups, pads, stride, dilation, in_sp, out_sp):
    """With stride 1, conv_transpose(x, w) is a plain convolution of x padded by d (k - 1) - lo before (and to
    out's size after) with w flipped and its channel axes swapped: (the flipped w, its pads), or None where
    that does not hold (a stride, a padding wider than the kernel) or costs more. One product and an im2col
    of x's C_in channels, against col2im's product of C_out * K rows and its adds: the cheaper side when C_in
    <= C_out (a conv's input gradient, from its few output channels). But its product runs over the output's
    positions and col2im's over the input's: where the output has SPREAD times the input's positions and more
    (DCGAN's first layer, 1 x 1 noise to 4 x 4: 16 times), col2im's side is the cheaper."""
    if (any(s != 1 for s in stride) or wd.shape[0] > wd.shape[1] * groups
            or _prod(out_sp) >= SPREAD * _prod(in_sp)):
        return None
    kernel = wd.shape[2:]
    flip_pads = tuple((d * (k - 1) - lo, o - i + lo) for k, d, (lo, _), i, o in zip(kernel, dilation, pads, in_sp,
                                                                                   out_sp))
    if min(min(p) for p in flip_pads) < 0:
        return None
    Cin, Cg = wd.shape[0], wd.shape[1]
    flipped = wd.reshape((groups, Cin // groups, Cg) + kernel).swapaxes(1, 2)[(Ellipsis,) + (slice(None, None, -1),)
                                                                               * len(kernel)]
    return flipped.reshape((groups * Cg, Cin // groups) + kernel), flip_pads


class ConvolutionTranspose(Function):
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, stride, pads, dilation, groups, out_spatial):
        # the adjoint of Convolution in its input: y = col2im(w^T x), w of shape (C_in, C_out/G, *k)
        xd, wd = x.array, w.array
        N, kernel = xd.shape[0], wd.shape[2:]
        Cout = wd.shape[1] * groups
        flipped = _as_correlation(wd, groups, pads, stride, dilation, xd.shape[2:], out_spatial)
        if N == 0:  # (the reshapes below cannot size themselves from no elements)
            y = xp_of(xd).zeros((N, Cout) + tuple(out_spatial), dtype=xd.dtype)
        elif flipped is not None:
            y = _conv_arrays(xd, flipped[0], stride, flipped[1], dilation, groups)
        else:
            # the conv whose input gradient this is has weight w viewed as (C_in, C_out/G, k): its "O" is C_in
            y = _input_grad(xd, wd, (N, Cout) + tuple(out_spatial), pads, kernel, stride, dilation, xd.shape[2:],
                            groups)
        if b is not None:
            y += b.array.reshape((Cout,) + (1,) * len(kernel))
        ctx.save(input=x if ctx.needs_input_grad[1] else None, weight=w if ctx.needs_input_grad[0] else None)
        ctx.conv = stride, pads, dilation, groups, wd.shape[2:], xd.shape[2:]
        return y

    @staticmethod
    def backward(ctx, g):  # gx = conv(g, w),  gw = sum x g_windows (the roles of conv's weight gradient swapped)
        x, w = ctx.saved_tensors
        stride, pads, dilation, groups, kernel, in_sp = ctx.conv
        needs = ctx.needs_input_grad
        gx = _fit(Convolution.apply(g, w, None, stride, pads, dilation, groups), in_sp) if needs[0] else None
        gw = ConvolutionWeight.apply(g, x, kernel, stride, pads, dilation, groups) if needs[1] else None
        gb = _bias_grad(g) if len(needs) > 2 and needs[2] else None
        return gx, gw, gb, None, None, None, None, None


class ConvolutionWeight(Function):
    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, x, g, kernel, stride, pads, dilation, groups):  # Convolution's weight gradient
        ctx.save(input=x if ctx.needs_input_grad[1] else None, grad=g if ctx.needs_input_grad[0] else None)
        ctx.conv = kernel, stride, pads, dilation, groups, x.array.shape[2:], g.array.shape[2:]
        return _weight_grad_arrays(x.array, g.array, kernel, stride, pads, dilation, groups)

    @staticmethod
    def backward(ctx, gg):  # linear in x and in g: d/dx = conv_transpose(g, gg),  d/dg = conv(x, gg)
        x, g = ctx.saved_tensors
        kernel, stride, pads, dilation, groups, in_sp, out_sp = ctx.conv
        needs = ctx.needs_input_grad
        gx = ConvolutionTranspose.apply(g, gg, None, stride, pads, dilation, groups, in_sp) if needs[0] else None
        gg_ = _fit(Convolution.apply(x, gg, None, stride, pads, dilation, groups), out_sp) if needs[1] else None
        return gx, gg_, None, None, None, None, None


# ---- argument checks (PyTorch's messages) -----------------------------------------------------------------
def expand_param(value, n, name):
    """An int or a sequence of n ints -> a tuple of n ints, or PyTorch's RuntimeError."""
    if isinstance(value, int) or hasattr(type(value), "__index__"):  # (a numpy integer too)
        return (value.__index__(),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value


def _conv_args(input, weight, bias, stride, padding, dilation, groups, n, name, transposed=False):
    check_tensor(input, "input", name)
    check_tensor(weight, "weight", name)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    if weight.ndim != n + 2:  # (PyTorch's words: it takes the weight's dims for the convolution's)
        if weight.ndim < 3:
            raise RuntimeError("weight should have at least three dimensions")
        strides = expand_param(stride, n, "stride")
        if n > 1:
            raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.ndim - 2} values to "
                               f"match the convolution dimensions, but got stride={list(strides)}")
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    dt = input.array.dtype
    # PyTorch's order and words: the bias first (with C++ type names), then the weight (with legacy names)
    if bias is not None and bias.array.dtype != dt and not transposed:
        raise RuntimeError(f"Input type ({cpp_name(dt)}) and bias type ({cpp_name(bias.array.dtype)}) should be the same")
    if dt.kind == "c":  # (PyTorch's complex convolution checks its operands first, in Tensor::toString's names)
        for t, what in ((weight, "weight"), (bias, "bias")):
            if t is not None and t.array.dtype != dt:
                raise RuntimeError(f"Input type ({type_text(input.dtype)}) and {what} type ({type_text(t.dtype)}) should be "
                                   f"the same")
    if transposed and bias is not None and bias.dtype.is_complex and dt.kind != "c" and weight.array.dtype == dt:
        result = from_numpy_dtype(promote_types(dt, bias.array.dtype))  # (added to the real output)
        raise RuntimeError(f"result type {result._legacy[:-6]} can't be cast to the desired output type "
                           f"{input.dtype._legacy[:-6]}")
    for t in (weight, bias):
        if t is not None and t.array.dtype != dt:
            raise RuntimeError(f"expected scalar type {input.dtype._legacy[:-6]} but found {t.dtype._legacy[:-6]}")
    if dt.kind not in "fc":
        raise NotImplementedError(f'"{name}" not implemented for {input.dtype}: pass a floating point tensor')
    stride, dilation = expand_param(stride, n, "stride"), expand_param(dilation, n, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    ws = list(weight.shape)
    batched = input.ndim == n + 2
    xs = list(input.shape) if batched else [1] + list(input.shape)
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got "
                           f"weight of size [{ws}] instead")
    if transposed:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} to have {ws[0]} channels, "
                               f"but got {xs[1]} channels instead")
        out_channels = ws[1] * groups
    else:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input{xs} to have "
                               f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
        out_channels = ws[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {ws}, expected bias to be 1-dimensional with {out_channels} elements, "
                           f"but got bias of size {list(bias.shape)} instead")
    kernel = tuple(ws[2:])
    if 0 in kernel:  # (PyTorch's words: a 1-d kernel shown as its 2-d one)
        got = (f": {' x '.join(map(str, kernel))} (TxHxW)" if n == 3 else
               " kernel_height: {} kernel_width: {}".format(*((1,) * (n == 1) + kernel)))
        raise RuntimeError("kernel size should be greater than zero, but got" + got)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * n
        elif padding == "same" and not transposed:
            if max(stride) > 1:
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # the total d (k - 1) split as PyTorch does: the odd one extra on the right
            pads = tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
            if any(left != right for left, right in pads):
                warn_once("conv_same_asymmetric", "Using padding='same' with even kernel lengths and odd dilation may "
                          "require a zero-padded copy of the input be created")
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = expand_param(padding, n, "padding")
        if min(p) < 0:
            raise RuntimeError("negative padding is not supported")
        pads = tuple((v, v) for v in p)
    return input if batched else input.unsqueeze(0), batched, stride, pads, dilation, kernel


def _check_empty(shape):
    """PyTorch takes an empty batch or no channels, not empty positions (a 1-d conv's shape shown as its 2-d one)."""
    if shape[0] and shape[1] and 0 in shape[2:]:
        shown = list(shape[:2]) + [1] * (len(shape) == 3) + list(shape[2:])
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: {shown}")


class EmptyConvolution(Function):
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, shape):  # a convolution of no channels: nothing, and nothing flows back
        ctx.shapes = [None if t is None else t.array.shape for t in (x, w, b)]
        return xp_of(x.array).zeros(shape, dtype=x.array.dtype)

    @staticmethod
    def backward(ctx, g):
        xp = xp_of(g.array)
        return tuple(None if s is None else wrap(xp.zeros(s, dtype=g.array.dtype)) for s in ctx.shapes) + (None,)


def _convnd(input, weight, bias, stride, padding, dilation, groups, n, name):
    x, batched, stride, pads, dilation, kernel = _conv_args(input, weight, bias, stride, padding, dilation, groups, n,
                                                            name)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(e > p for e, p in zip(eff, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    if 0 in x.shape:
        _check_empty(x.shape)

    def conv(x, w, b):
        if x.shape[1] == 0:  # (PyTorch's output keeps the input's 0 channels, not weight's out_channels)
            out = tuple(out_size(s, k, st, d, lo, hi) for s, k, st, d, (lo, hi) in
                        zip(x.shape[2:], kernel, stride, dilation, pads))
            return EmptyConvolution.apply(x, w, b, tuple(x.shape[:2]) + out)
        return keep_absent_edges(Convolution.apply(x, w, b, stride, pads, dilation, groups), (x, w, b), (2,))

    y = complex_conv(conv, x, weight, bias) if x.dtype.is_complex else conv(x, weight, bias)
    return y if batched else y.squeeze(0)


def complex_conv(conv, x, w, b):
    """conv(x, w, b) of complex operands as three real convolutions of their parts (Gauss's trick, in PyTorch's
    order so that the rounding agrees): p = conv(xr, wr, br), q = conv(xi, wi), s = conv(xr + xi, wr + wi, br + bi),
    y = p - q + i (s - p - q). All recorded ops on real tensors: autograd differentiates them as they are (the
    gradients are again convolutions, of the conjugated weight and input), twice over too."""
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    p = conv(xr, wr, None if b is None else b.real)
    q = conv(xi, wi, None)
    s = conv(xr + xi, wr + wi, None if b is None else b.real + b.imag)
    return p - q + 1j * (s - p - q)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as PyTorch). Shapes: input (N, C_in, L) or (C_in, L), weight
    (C_out, C_in/groups, k), bias (C_out,) -> (N, C_out, L_out), L_out = (L + 2p - d (k - 1) - 1) // s + 1.
    padding: an int, 'valid' (0) or 'same' (stride 1 only). One `ConvolutionBackward0` node."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as PyTorch). Shapes: input (N, C_in, H, W) or (C_in, H, W), weight
    (C_out, C_in/groups, kH, kW), bias (C_out,) -> (N, C_out, H_out, W_out), H_out = (H + 2p - d (kH - 1) - 1)
    // s + 1. stride, padding, dilation: an int or a pair; padding also 'valid' or 'same' (stride 1; an odd
    total puts the extra row and column at the end, as PyTorch). One `ConvolutionBackward0` node."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation, as PyTorch). Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W), weight
    (C_out, C_in/groups, kD, kH, kW), bias (C_out,) -> (N, C_out, D_out, H_out, W_out), each size as conv2d's.
    One `ConvolutionBackward0` node."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, n, name):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, batched, stride, pads, dilation, kernel = _conv_args(input, weight, bias, stride, padding, dilation, groups, n,
                                                            name, transposed=True)
    op = expand_param(output_padding, n, "output_padding")
    if any(o >= s and o >= d for o, s, d in zip(op, stride, dilation)) or min(op) < 0:
        # PyTorch runs a 1-d transposed convolution as a 2-d one of height 1, and its message says so
        op2, st2, d2 = ((0,) + op, (1,) + stride, (1,) + dilation) if n == 1 else (op, stride, dilation)
        dims = ("depth", "height", "width")[-len(op2):]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"{what}_{dim}: {v}" for what, vals in (("output_padding", op2), ("stride", st2), ("dilation", d2))
            for dim, v in zip(dims, vals)))
    out = tuple((s - 1) * st - 2 * lo + d * (k - 1) + o + 1
                for s, st, (lo, _), d, k, o in zip(x.shape[2:], stride, pads, dilation, kernel, op))
    if 0 in x.shape or min(out) <= 0:
        _check_empty(x.shape)
        if x.shape[0] == 0 and min(out) < 0:  # (PyTorch's words where it sizes an empty batch's output)
            shape = [0, weight.shape[1] * groups] + [1] * (n == 1) + list(out)
            bad = next(i for i, v in enumerate(shape) if v < 0)
            raise RuntimeError(f"invalid shape dimension {shape[bad]} at index {bad} of shape {shape}")
        if x.shape[0] and min(out) <= 0:
            one = "1 x " if n == 1 else ""
            raise RuntimeError(f"Given input size per channel: ({one}{' x '.join(map(str, x.shape[2:]))}). Calculated "
                               f"output size per channel: ({one}{' x '.join(map(str, out))}). Output size is too small")
    # col2im writes positions up to (H - 1) s + d (kH - 1): the padded frame holds those and the cropped
    # output [p, p + H_out); output_padding's extra rows past the last window stay zero
    pads = tuple((lo, max(lo - o, 0)) for (lo, _), o in zip(pads, op))

    def conv(x, w, b):
        return keep_absent_edges(ConvolutionTranspose.apply(x, w, b, stride, pads, dilation, groups, out), (x, w, b), (2,))

    y = complex_conv(conv, x, weight, bias) if x.dtype.is_complex else conv(x, weight, bias)
    return y if batched else y.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv1d in its input. Shapes: input (N, C_in, L) or (C_in, L), weight
    (C_in, C_out/groups, k), bias (C_out,) -> (N, C_out, L_out), L_out = (L - 1) s - 2p + d (k - 1) +
    output_padding + 1. One `ConvolutionBackward0` node."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                             "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d in its input (a "deconvolution"). Shapes: input (N, C_in, H, W) or (C_in, H, W),
    weight (C_in, C_out/groups, kH, kW), bias (C_out,) -> (N, C_out, H_out, W_out), H_out = (H - 1) s - 2p +
    d (kH - 1) + output_padding + 1. One `ConvolutionBackward0` node."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                             "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv3d in its input. Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W), weight
    (C_in, C_out/groups, kD, kH, kW), bias (C_out,) -> (N, C_out, D_out, H_out, W_out), each size as
    conv_transpose2d's. One `ConvolutionBackward0` node."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                             "conv_transpose3d")
