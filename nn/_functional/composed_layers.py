"""The rest of torch.nn.functional's normalizations, dropouts and 1-d pools, composed of minigrad's ops and
of nn.functional's own batch_norm, dropout masks and 2-d pools (so autograd differentiates them):

    group_norm, instance_norm, rms_norm
    dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout
    max_pool1d, avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool1d, lp_pool1d/2d/3d
    max_unpool1d, max_unpool2d, max_unpool3d
"""
import math
import operator
import warnings

import minigrad
from minigrad.autograd.composite import composite_node

from ._common import check_tensor
from .activation import SELU_ALPHA, SELU_SCALE
from .dropout import KeepMask, written
from .normalization import batch_norm, group_norm_node
from .pooling import adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool2d, avg_pool3d, max_pool2d, pooled_size
from .pooling import _check_adaptive_nonempty, _int_like, check_int_args

SELU_SATURATION = SELU_SCALE * SELU_ALPHA  # -SELU's limit at -inf, which alpha dropout writes for a dropped value


# ---- normalizations ------------------------------------------------------------------------------------
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of C / num_groups channels of each sample over its channels and positions
    (biased variance), then weight and bias per channel. Shapes: input (N, C, *), weight, bias (C,) -> like input."""
    check_tensor(input, "input", "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    N, C = input.shape[0], input.shape[1]
    rows = [N * C // num_groups, num_groups] + list(input.shape[2:])  # (PyTorch's check, before the one below)
    if rows[0] * math.prod(rows[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {rows}")
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for '{input.dtype._legacy[:-6]}'")
    return group_norm_node(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its positions: batch_norm of the input seen as one sample
    of N C channels, as PyTorch computes it; running statistics (when given) move by the mean over the batch.
    Shapes: input (N, C, *), running_mean, running_var, weight, bias (C,) -> like input."""
    check_tensor(input, "input", "instance_norm")
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected input of at least 3 dimensions (N, C, L...), got size "
                         f"{list(input.shape)}")
    N, C = input.shape[0], input.shape[1]
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if N * C == 0 and (weight is not None or bias is not None):  # PyTorch's batch_norm of (1, 0, *): weight[0]
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    rm = None if running_mean is None else running_mean.repeat(N)
    rv = None if running_var is None else running_var.repeat(N)
    w = None if weight is None else weight.repeat(N)
    b = None if bias is None else bias.repeat(N)
    y = batch_norm(input.reshape(1, N * C, *input.shape[2:]), rm, rv, w, b, use_input_stats, momentum, eps)
    with minigrad.no_grad():
        for run, per in ((running_mean, rm), (running_var, rv)):
            if run is not None and use_input_stats:
                run.copy_(per.reshape(N, C).mean(0))
    return y.reshape(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims; eps None: the machine
    epsilon of the dtype it computes in (PyTorch's default). Shapes: input (*, *normalized_shape), weight
    normalized_shape."""
    check_tensor(input, "input", "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")  # (sic)
    # float16 in float32 (PyTorch's opmath), float32's eps the default, the result rounded once
    x = input.float() if input.dtype == minigrad.float16 else input
    eps = minigrad.finfo(x.dtype).eps if eps is None else eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    y = y if weight is None else y * weight
    return y if y.dtype == input.dtype else y.to(input.dtype)  # PyTorch's: the input's dtype, whatever the weight's


# ---- dropouts ------------------------------------------------------------------------------------------
def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_mask(input, p, batched):
    """A 0/1 tensor in input's dtype, one draw per (sample, channel) (per channel when not batched)."""
    lead = 2 if batched else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return KeepMask.apply(input.detach(), shape, p)


def _channels_dropout(input, p, training, batched, inplace):
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return written(input, input * 0.0, inplace)
    return written(input, input * _feature_mask(input, p, batched) / (1.0 - p), inplace)


def _unbatched_channels_dropout(input, p, training, inplace):
    # PyTorch adds the batch dimension and takes it off again, even where nothing is dropped
    x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    y = _channels_dropout(x, p, training, True, inplace)
    return y.squeeze_(0) if inplace else y.squeeze(0)


def _deprecated_dims(name, ndim, dims, spatial):
    if ndim not in dims:
        warnings.warn(f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error "
                      "in a future release. To retain the behavior and silence this warning, please use dropout "
                      f"instead. Note that {name} exists to provide channel-wise dropout on inputs with {spatial} "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{dims[0]}D or {dims[1]}D inputs).", stacklevel=3)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels with probability p (scaling the rest by 1/(1-p)). Shapes: (N, C, L) or (C, L)."""
    check_tensor(input, "input", "dropout1d")
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return _unbatched_channels_dropout(input, p, training, inplace)
    return _channels_dropout(input, p, training, True, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels with probability p (scaling the rest by 1/(1-p)). Shapes: (N, C, H, W); as PyTorch, dims
    0 and 1 are always (N, C), so a 3-D input is (N, C, L), with a warning."""
    check_tensor(input, "input", "dropout2d")
    _check_p(p)
    _deprecated_dims("dropout2d", input.ndim, (3, 4), 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _channels_dropout(input, p, training, True, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels with probability p (scaling the rest by 1/(1-p)). Shapes: (N, C, D, H, W) or (C, D, H, W)."""
    check_tensor(input, "input", "dropout3d")
    _check_p(p)
    _deprecated_dims("dropout3d", input.ndim, (4, 5), 3)
    if input.ndim == 4:
        return _unbatched_channels_dropout(input, p, training, inplace)
    return _channels_dropout(input, p, training, input.ndim == 5, inplace)


def _alpha_dropout(input, p, training, mask_of, inplace):
    check_tensor(input, "input", "alpha_dropout")
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return written(input, input * 0.0, inplace)
    # keep x, or write SELU's limit at -inf (-s); then y = a x' + a s p restores zero mean and unit variance,
    # a = ((1 - p) (1 + p s^2))^-1/2
    s = SELU_SATURATION
    a = ((1.0 - p) * (1.0 + p * s * s)) ** -0.5
    keep = mask_of(input, p)
    return written(input, input * (keep * a) + ((keep - 1.0) * (s * a) + s * a * p), inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalization: a dropped value becomes SELU's negative saturation, and an
    affine map keeps mean 0 and variance 1. Shape: (*) -> (*)."""
    return _alpha_dropout(input, p, training, lambda x, q: KeepMask.apply(x.detach(), tuple(x.shape), q), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels. Shapes: (N, C, *)."""
    return _alpha_dropout(input, p, training, lambda x, q: _feature_mask(x, q, True), inplace)


# ---- 1-d pools: the 2-d pools over a height of one ------------------------------------------------------
def _one(v, what, fn, position=2):
    if v is None:  # (PyTorch's argument parser: the 2-d and 3-d pools' None = keep is no 1-d size)
        raise TypeError(f"{fn}(): argument '{what}' (position {position}) must be tuple of ints, not NoneType")
    v = operator.index(v) if _int_like(v) else tuple(v)  # (a numpy integer, a 0-d tensor: an int, as PyTorch)
    if isinstance(v, tuple):
        if len(v) != 1:
            raise RuntimeError(f"{fn}() argument '{what}' should contain one int (got {len(v)})")
        v = v[0]
        if v is None:
            raise TypeError(f"{fn}(): argument '{what}' (position {position}) must be tuple of ints, but found "
                            "element of type NoneType at pos 0")
    return v


def _pool1d_input(input, name):
    check_tensor(input, "input", name)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' "
                           f"(while checking arguments for {name})")
    return input.unsqueeze(-2)


def _pool1d_sizes(kernel_size, stride, padding, dilation, fn):
    """kernel_size, stride (None: the kernel's), padding, dilation of a 1-d pool as ints, in PyTorch's order of checks."""
    kernel = _one(kernel_size, "kernel_size", fn)
    stride = None if stride is None or (not _int_like(stride) and len(stride) == 0) else _one(stride, "stride", fn, 3)
    return kernel, stride, _one(padding, "padding", fn, 4), _one(dilation, "dilation", fn, 5)


def _max_pool1d_checks(input, kernel_size, stride, padding, dilation, ceil_mode):
    """PyTorch's checks and texts of max_pool1d without indices (its own kernel's, not max_pool2d's)."""
    check_tensor(input, "input", "max_pool1d")
    check_int_args("max_pool1d", kernel_size, stride, padding, dilation)
    shape = tuple(input.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(shape)}")
    if input.array.dtype.kind != "f":  # (max_pool2d, and max_pool1d with indices, take integers)
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{input.dtype._legacy[:-6]}'")
    k, s, p, d = (v if v is None else operator.index(v) if _int_like(v) else tuple(v)
                  for v in (kernel_size, stride, padding, dilation))
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
        if isinstance(v, tuple) and len(v) != 1 and not (name == "stride" and v == ()):
            ways = {"stride": "None, an int, list of ints, or", "padding": "an int, list of ints, or"}.get(
                name, "an int, list of ints or")  # (PyTorch's texts differ in their commas)
            raise RuntimeError(f"max_pool1d() {name} must be {ways} tuple of ints of size 1 but got size {len(v)}")
    k, p, d = (v if isinstance(v, int) else v[0] for v in (k, p, d))
    s = k if s in (None, ()) else s if isinstance(s, int) else s[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = pooled_size(shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each window of kernel_size positions. Shapes: (N, C, L) or (C, L) -> (N, C, L_out)."""
    if return_indices:  # (with indices PyTorch runs max_pool2d's checks, as here, under its own name)
        check_int_args("max_pool1d_with_indices", kernel_size, stride, padding, dilation)
    else:
        _max_pool1d_checks(input, kernel_size, stride, padding, dilation, ceil_mode)
    x = _pool1d_input(input, "max_pool1d")
    kernel, stride, padding, dilation = _pool1d_sizes(kernel_size, stride, padding, dilation, "max_pool1d")
    out = max_pool2d(x, (1, kernel), None if stride is None else (1, stride), (0, padding), (1, dilation), ceil_mode,
                     return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each window of kernel_size positions. Shapes: (N, C, L) or (C, L) -> (N, C, L_out)."""
    check_int_args("avg_pool1d", kernel_size, stride, padding, 1)
    x = _pool1d_input(input, "avg_pool1d")
    kernel, stride, padding, _ = _pool1d_sizes(kernel_size, stride, padding, 1, "avg_pool1d")
    return avg_pool2d(x, (1, kernel), None if stride is None else (1, stride), (0, padding), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Means over output_size windows that tile the length. Shapes: (N, C, L) or (C, L) -> (N, C, output_size)."""
    x = _pool1d_input(input, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(x, (1, _one(output_size, "output_size", "adaptive_avg_pool1d"))).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Maxes over output_size windows that tile the length. Shapes: (N, C, L) or (C, L) -> (N, C, output_size);
    return_indices: also each max's position along L (int64)."""
    check_tensor(input, "input", "adaptive_max_pool1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_max_pool1d)")
    size = _one(output_size, "output_size", "adaptive_max_pool1d")
    _check_adaptive_nonempty(input, "adaptive_max_pool1d")
    # a height of one: the flat indices into the 1 x L plane are the positions along L
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def _lp_of_means(means, norm_type, count):
    """(count * mean of x^p)^(1/p): the p-norm of each window from its mean of x^p (a negative mean, from an odd
    p, gives 0 rather than a NaN root, as PyTorch's)."""
    return (minigrad.sign(means) * means.abs().relu()).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window: (sum x^p)^(1/p). Shapes: (N, C, L) or (C, L) -> (N, C, L_out)."""
    means = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_of_means(means, norm_type, _one(kernel_size, "kernel_size", "avg_pool1d"))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window: (sum x^p)^(1/p). Shapes: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    means = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_of_means(means, norm_type, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window: (sum x^p)^(1/p). Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out,
    W_out)."""
    kd, kh, kw = (kernel_size,) * 3 if isinstance(kernel_size, int) else tuple(kernel_size)
    means = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_of_means(means, norm_type, kd * kh * kw)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over the `size` channels around each one)^beta (AlexNet's normalization;
    the window zero-padded at the ends and divided by `size`). Shapes: (N, C, *) -> the same."""
    check_tensor(input, "input", "local_response_norm")
    if input.ndim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "  # (PyTorch's spacing)
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    squares = input * input
    shape = tuple(squares.shape)
    before, after = size // 2, (size - 1) // 2
    padded = minigrad.cat([squares.new_zeros((shape[0], before) + shape[2:]), squares,
                           squares.new_zeros((shape[0], after) + shape[2:])], dim=1)
    window = padded.narrow(1, 0, shape[1])
    for i in range(1, size):
        window = window + padded.narrow(1, i, shape[1])
    return input / (window / size * alpha + k).pow(beta)


# ---- PyTorch's deprecated names for interpolate ----------------------------------------------------------
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate(input, size, scale_factor, mode, align_corners), with PyTorch's deprecation warning."""
    from .pooling import interpolate

    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate(input, size, scale_factor, mode='nearest'), with PyTorch's deprecation warning."""
    from .pooling import interpolate

    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate(input, size, scale_factor, mode='bilinear', align_corners=True), with PyTorch's warning."""
    from .pooling import interpolate

    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- max unpooling: each value written back at the position its max pool found (zeros elsewhere) -------------
def _unpool_output_size(input, kernel, stride, padding, output_size):
    """The spatial output size: the pool's input size that gives input's size, or `output_size` (n or n + 2 numbers,
    each within a stride of that default, PyTorch's ValueErrors)."""
    n = len(kernel)
    default = [(input.shape[input.ndim - n + i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(n)]
    if output_size is None:
        return default
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for i, (o, d, s) in enumerate(zip(output_size, default, stride)):
        if not d - s < o < d + s:
            raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between {d - s} and {d + s})')
    return [int(o) for o in output_size]


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    kernel = _n_ints(kernel_size, n)
    stride = kernel if stride is None else _n_ints(stride, n)
    padding = _n_ints(padding, n)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    if n == 1:  # PyTorch unpools a length as an L x 1 plane, and its messages say so
        input, indices, size = input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]
    m = len(size)
    name = f"max_unpooling{m}d"
    if indices.dtype != minigrad.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {indices.dtype._legacy[:-6]}" if m == 2 else ""))
    if input.ndim not in (m + 1, m + 2):
        raise RuntimeError(f"Input to {name} should be a {m + 1}d or {m + 2}d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if m == 3 and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_unpool{m}d\" not implemented for '{input.dtype._legacy[:-6]}'")
    plane = math.prod(size)
    lead = tuple(input.shape[:-m])
    flat = indices.reshape(lead + (-1,))
    bad = (flat < 0) | (flat >= plane)
    if bad.any():  # (PyTorch's loop names the last one in memory order, when it runs on one thread)
        raise RuntimeError(f"Found an invalid max index: {flat[bad][-1].item()} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    out = _UNPOOL_NODES[m](input, flat, lead, size)
    return out.squeeze(-1) if n == 1 else out


def _unpool(input, flat, lead, size):
    # one scatter along the flattened plane: its gradient in input is the output's gradient gathered at the indices
    out = input.new_zeros(lead + (math.prod(size),)).scatter(-1, flat, input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(size))


_UNPOOL_NODES = {m: composite_node(f"MaxUnpool{m}DBackward0", "zero")(_unpool) for m in (2, 3)}


def _n_ints(v, n):
    return (int(v),) * n if isinstance(v, int) else tuple(int(a) for a in v)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d's partial inverse: each value written at its index along the output length, zeros elsewhere.
    Shapes: input, indices (N, C, L) or (C, L) -> (N, C, L_out), L_out = (L - 1) s - 2p + k or output_size."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool2d's partial inverse: each value written at its flat index into the H_out x W_out plane, zeros
    elsewhere. Shapes: input, indices (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), H_out = (H - 1) s - 2p +
    kH or output_size's."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool3d's partial inverse, into the D_out x H_out x W_out volume. Shapes: input, indices (N, C, D, H, W)
    or (C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d's values and indices, whatever return_indices says (PyTorch's)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool1d's values and indices, whatever return_indices says (PyTorch's)."""
    return adaptive_max_pool1d(input, output_size, True)
