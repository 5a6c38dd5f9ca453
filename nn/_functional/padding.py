"""pad: 'constant' (any dims; negative pads crop) and 'reflect', 'replicate', 'circular' (the last 1-3 dims).

The pad tuple is PyTorch's: (left, right) of the last dim first, then of the dim before it, ...
Constant padding is one ConstantPadNdBackward0 node whose backward is the same op with the pads
negated (crop what was added, zero-fill what was cropped), so it is differentiable twice. The
reflect and replicate modes pick, along each padded dim, an input position per output position: a selection
per dim (pooling.py's Nearest, a gather, so an inf stays where it is) applied by the Separable node (its backward
sums repeated picks, and is itself linear). Circular padding is PyTorch's composite, copies into slices of a new
tensor, so its graph is PyTorch's chain of CopySlices and SliceBackward0 nodes.
"""
import numpy as np

from ._common import Function, check_tensor, xp_of
from .pooling import Nearest, _separable


class ConstantPadNd(Function):
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pads, value):  # pads ((lo, hi), ...) for the last len(pads) dims; negative crops
        xd = x.array
        xp = xp_of(xd)
        lead = xd.ndim - len(pads)
        shape = xd.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(xd.shape[lead:], pads))
        y = xp.full(shape, value, dtype=xd.dtype)
        src = (slice(None),) * lead + tuple(slice(max(-lo, 0), s - max(-hi, 0)) for s, (lo, hi) in
                                            zip(xd.shape[lead:], pads))
        dst = (slice(None),) * lead + tuple(slice(max(lo, 0), max(lo, 0) + max(s - max(-lo, 0) - max(-hi, 0), 0))
                                            for s, (lo, hi) in zip(xd.shape[lead:], pads))
        y[dst] = xd[src]
        ctx.pads = pads
        return y

    @staticmethod
    def backward(ctx, g):  # the adjoint: pad by the negated amounts with zeros
        return ConstantPadNd.apply(g, tuple((-lo, -hi) for lo, hi in ctx.pads), 0), None, None


_MODES = ("constant", "reflect", "replicate", "circular")
_PAD_NODES = {(m, k): _separable(f"{name}{k}DBackward0") for m, name in
              (("reflect", "ReflectionPad"), ("replicate", "ReplicationPad")) for k in (1, 2, 3)}


def _picks(n, lo, hi, mode):
    """The selection (n + lo + hi, n): output i picks input position i - lo reflected or clamped into [0, n)."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i > n - 1, 2 * (n - 1) - i, i)
    else:
        i = np.clip(i, 0, n - 1)
    return Nearest(i, n)


def _circular(x, pads):
    """x wrapped around its last len(pads) dims, as PyTorch's composite does it (so its graph is PyTorch's): a new
    tensor, the input (less what negative pads crop) copied into its middle, then along each dim, from the last,
    its first `lo` positions copied from the end of that middle and its last `hi` from the start (the corners
    are copied again by each later dim)."""
    nd, k = x.ndim, len(pads)
    dims = range(nd - 1, nd - 1 - k, -1)  # (the last dim first, as `pad` lists the pairs)
    lows, highs = [pads[d - nd + k][0] for d in dims], [pads[d - nd + k][1] for d in dims]
    sizes = list(x.shape)
    outs = sizes[:nd - k] + [n + lo + hi for n, (lo, hi) in zip(sizes[nd - k:], pads)]
    out = x.new_empty(outs)
    middle, kept = out, x
    for d, lo, hi in zip(dims, lows, highs):
        middle = _span(middle, d, max(lo, 0), outs[d] - max(hi, 0))
        kept = _span(kept, d, max(-lo, 0), sizes[d] - max(-hi, 0))
    middle.copy_(kept)
    for d, lo, hi in zip(dims, lows, highs):
        if lo > 0:
            _span(out, d, 0, lo).copy_(_span(out, d, outs[d] - lo - max(hi, 0), outs[d] - max(hi, 0)))
        if hi > 0:
            _span(out, d, outs[d] - hi, outs[d]).copy_(_span(out, d, max(lo, 0), max(lo, 0) + hi))
    return out


def _span(t, d, start, stop):
    """t's positions [start, stop) along d, clamped into its size as a slice is (an empty output's spans are empty)."""
    n = t.shape[d]
    start = min(max(start, 0), n)
    return t.narrow(d, start, min(max(stop, start), n) - start)


def _check_circular(sizes, pads, outs):
    """PyTorch's refusals, dim by dim; then, where it would give uninitialized memory, minigrad's."""
    for n, (lo, hi), m in zip(sizes, pads, outs):
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if m < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    for n, (lo, hi), m in zip(sizes, pads, outs):
        if m and n - max(-lo, 0) - max(-hi, 0) <= 0:
            raise RuntimeError(f"pad: circular padding ({lo}, {hi}) of a dim of size {n} wraps around nothing: "
                               "its negative padding crops every input position")


def _check_reflect_replicate(mode, shape, pads, outs):
    """PyTorch's refusals, in its order: an empty non-batch dim, a reflection as wide as its dim, no output left."""
    nd, k = len(shape), len(pads)
    if 0 in shape[nd - k - 1:]:
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(shape)}")
    for j in reversed(range(k)):  # (from the last dim, as `pad` lists the pairs: PyTorch checks in that order)
        lo, hi = pads[j]
        if mode == "reflect" and (lo >= shape[nd - k + j] or hi >= shape[nd - k + j]):
            raise RuntimeError(f"Argument #{2 + 2 * (k - j)}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {nd - k + j} of input "
                               f"{list(shape)}")
    if max(outs) < 1:  # (a 2-d or 3-d pad may empty some of its dims, not all)
        names = "DHW"[3 - k:]
        sep = (", " if k == 2 else " ", " ") if mode == "replicate" and k == 2 else (", ",) if k == 2 else (" ", ", ")
        given = "".join(f"{a}: {n}" + (sep[i] if i < k - 1 else "") for i, (a, n) in
                        enumerate(zip(names, shape[nd - k:])))
        given += " " if mode == "replicate" and k == 2 else ""
        raise RuntimeError(f"input ({given}) is too small. Calculated output "
                           f"{' '.join(f'{a}: {m}' for a, m in zip(names, outs))}")
    if min(outs) < 0:
        out_shape = list(shape[:nd - k]) + list(outs)
        raise RuntimeError("numel: integer multiplication overflow" if mode == "reflect" else
                           f"Trying to create tensor with negative dimension {min(outs)}: {out_shape}")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts in 'constant' mode, crop) the last dims of `input`.

    pad: (left, right) for the last dim, then (top, bottom) for the one before, ... (an even length).
    'constant' fills with `value` (0 by default) and takes any number of dims; 'reflect' (mirror without
    repeating the edge), 'replicate' (repeat the edge) and 'circular' (wrap) pad the last 1, 2 or 3 dims
    of a 2-3, 3-4 or 4-5 dimensional input. Shape: (*, d_k, ..., d_1) -> (*, d_k + p, ..., d_1 + p').
    """
    check_tensor(input, "input", "pad")
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    nd = input.ndim
    pads = tuple((int(pad[2 * (k - 1 - j)]), int(pad[2 * (k - 1 - j) + 1])) for j in range(k))  # first padded dim first
    shape = tuple(input.shape)
    if mode == "constant":
        if len(pad) > 2 * nd:
            raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                               f"padding length {len(pad)} and input of dimension {nd}")
        for j, (lo, hi) in enumerate(pads):
            if shape[nd - k + j] + min(lo, 0) + min(hi, 0) < 0:  # (PyTorch narrows by the negative pads first)
                raise RuntimeError("narrow(): length must be non-negative.")
        v = 0 if value is None else value
        if input.array.dtype.kind in "iub":
            v = int(v)
        return ConstantPadNd.apply(input, pads, v)
    if value is not None:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    sizes, outs = shape[nd - k:], tuple(n + lo + hi for n, (lo, hi) in zip(shape[nd - k:], pads))
    if mode == "circular":
        _check_circular(sizes, pads, outs)
    elif 0 in shape[nd - k - 1:] or min(outs) < 1 or mode == "reflect" and max(map(max, pads)) >= min(sizes):
        _check_reflect_replicate(mode, shape, pads, outs)  # (the gate is loose: the checks are exact)
    if mode == "circular":  # (copies: of any dtype, as PyTorch's)
        return _circular(input, pads)
    if input.array.dtype.kind not in "fc":
        raise NotImplementedError(f'pad: mode "{mode}" is implemented for floating point and complex tensors only, got '
                                  f"{input.dtype}")
    picks = tuple(_picks(shape[nd - k + j], lo, hi, mode) for j, (lo, hi) in enumerate(pads))
    return _PAD_NODES[(mode, k)].apply(input, picks)
