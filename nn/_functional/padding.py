"""pad: 'constant' (any dims; negative pads crop) and 'reflect', 'replicate', 'circular' (the last 1-3 dims).

The pad tuple is PyTorch's: (left, right) of the last dim first, then of the dim before it, ...
Constant padding is one ConstantPadNdBackward0 node whose backward is the same op with the pads
negated (crop what was added, zero-fill what was cropped), so it is differentiable twice. The
other modes pick, along each padded dim, an input position per output position: a selection per dim
(pooling.py's Nearest, a gather, so an inf stays where it is) applied by the Separable node (its backward
sums repeated picks, and is itself linear).
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
              (("reflect", "ReflectionPad"), ("replicate", "ReplicationPad"), ("circular", "CircularPad"))
              for k in (1, 2, 3)}


def _picks(n, lo, hi, mode):
    """The selection (n + lo + hi, n): output i picks input position i - lo reflected or clamped into [0, n), or
    wrapped."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i > n - 1, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    else:  # a negative pad crops first, and the other side wraps around what is left (PyTorch's order)
        kept = np.arange(max(-lo, 0), n - max(-hi, 0))
        i = kept[np.arange(-max(lo, 0), kept.size + max(hi, 0)) % kept.size]
    return Nearest(i, n)


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
    if 0 in shape[nd - k:] or (nd == k + 2 and shape[1] == 0):
        raise RuntimeError(f"pad: mode '{mode}' needs non-empty padded dimensions (and channels), got input of size "
                           f"{list(shape)}")
    for j in reversed(range(k)):  # from the last dim, as `pad` lists them (PyTorch's argument numbers count so)
        lo, hi = pads[j]
        n = shape[nd - k + j]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #{4 + 2 * (k - 1 - j)}: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({lo}, {hi}) at dimension {nd - k + j} of input {list(shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi <= 0 or min(lo, hi) < -n:
            raise RuntimeError(f"pad: the padding ({lo}, {hi}) of dim {nd - k + j} (size {n}) would give a "
                               "non-positive size")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f'pad: mode "{mode}" is implemented for floating point tensors only, got '
                                  f"{input.dtype}")
    picks = tuple(_picks(shape[nd - k + j], lo, hi, mode) for j, (lo, hi) in enumerate(pads))
    return _PAD_NODES[(mode, k)].apply(input, picks)
