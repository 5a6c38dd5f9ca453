"""Fractional max pooling (Graham, 2014): windows of a fixed size at pseudo-random starts, one draw in [0, 1) per
(sample, channel, spatial dim) placing them, so that output_size needs not divide the input's size."""
import numpy as np

import minigrad
from minigrad.autograd.composite import composite_node

from ._common import check_tensor


def _starts(sample, size, out, pool):
    """The windows' starts along one dim, as PyTorch's kernels compute them (in the input's float type)."""
    if out == 1:
        return np.array([size - pool])
    alpha = sample.dtype.type(size - pool) / sample.dtype.type(out - 1)
    i = np.arange(out - 1, dtype=sample.dtype)
    starts = ((i + sample) * alpha).astype(np.int64) - np.int64(sample * alpha)
    return np.append(starts, size - pool)


def _axes(d, out, k, n):
    """The shape putting one dim's (out, k) window positions at axes d and n + d of (*output_size, *kernel)."""
    return tuple(out if e == d else 1 for e in range(n)) + tuple(k if e == d else 1 for e in range(n))


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, n):
    name = f"fractional_max_pool{n}d"
    check_tensor(input, "input", name)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    input.size(-n - 1)  # (PyTorch's first reading of the channel dim: its IndexError for too few dims)
    spatial = tuple(input.shape[-n:])
    as_n = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n  # noqa: E731
    kernel = as_n(kernel_size)
    if output_size is None:
        output_size = [int(s * r) for s, r in zip(spatial, as_n(output_ratio))]
    output_size = as_n(output_size)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    where = name + "()" if n == 2 else name + "_out()"
    for dim, o, k, s in zip(("time", "height", "width")[-n:], output_size, kernel, spatial):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {dim} {k} too large relative to input {dim} {s}")
    batched = input.ndim == n + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = minigrad.rand(N, C, n, dtype=input.dtype)
    samples = _random_samples.detach().numpy()
    a = x.detach().numpy()
    # PyTorch's draws place W then H in 2-d, T, H, W in 3-d
    order = (1, 0) if n == 2 else (0, 1, 2)
    idx = np.empty((N, C) + output_size, dtype=np.int64)
    strides = np.cumprod((1,) + spatial[::-1])[:-1][::-1]
    for b in range(N):
        for c in range(C):
            starts = [_starts(samples[b, c, order[d]], spatial[d], output_size[d], kernel[d]) for d in range(n)]
            # every window's entries as flat positions in the plane, scanned row-major: (*output_size, *kernel)
            pos = sum((st[:, None] + np.arange(k)).reshape(_axes(d, len(st), k, n)) * stride
                      for d, (st, k, stride) in enumerate(zip(starts, kernel, strides)))
            pos = pos.reshape(output_size + (-1,))
            vals = a[b, c].reshape(-1)[pos]
            # (a NaN wins its window, as in PyTorch's kernels; otherwise the first of the largest)
            best = np.where(np.isnan(vals).any(-1), np.isnan(vals).argmax(-1), vals.argmax(-1))
            idx[b, c] = np.take_along_axis(pos, best[..., None], -1)[..., 0]
    indices = minigrad.tensor(idx if batched else idx[0])
    out = _PICK[n](input, indices.flatten(-n), tuple(indices.shape))
    return (out, indices) if return_indices else out


def _pick(input, flat_indices, shape):
    """input's values at flat_indices (positions in each plane: (N, C, P) or (C, P)), shaped `shape`."""
    return input.reshape(tuple(flat_indices.shape[:-1]) + (-1,)).gather(-1, flat_indices).reshape(shape)


# one node, PyTorch's (the windows' maxima do not move with input: the second derivative is zero)
_PICK = {n: composite_node(f"FractionalMaxPool{n}DBackward0", "zero")(_pick) for n in (2, 3)}


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """(values, indices) of fractional_max_pool2d, whatever return_indices says (PyTorch's)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The max over kH x kW windows at pseudo-random starts: (N, C, H, W) or (C, H, W) -> (N, C, *output_size),
    output_size given or int(size * output_ratio); _random_samples (N, C, 2) fixes the draws. return_indices:
    also each max's flat index into its H x W plane."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """(values, indices) of fractional_max_pool3d, whatever return_indices says (PyTorch's)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """fractional_max_pool2d in 3-d: (N, C, T, H, W) or (C, T, H, W); _random_samples (N, C, 3)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)
