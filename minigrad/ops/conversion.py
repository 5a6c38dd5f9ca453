"""Conversion between dtypes and devices: `Tensor.to`, and the casts of operand promotion."""
import numpy as np

from .._warn_once import warn_once
from ..autograd.function import Function
from ..device import device, to_device
from ..dtypes import get_dtype
from .array_op import array_op


def cast_array(a, dt, order="K"):
    """`a.astype(dt)`, silent as PyTorch's casts are: a float out of an integer dtype's range (inf, nan, the
    log(0) of T5's position buckets) becomes what the CPU's conversion makes of it, without numpy's warning."""
    if dt.kind in "iu" and a.dtype.kind in "fc":
        with np.errstate(invalid="ignore", over="ignore"):
            return a.astype(dt, order=order)
    return a.astype(dt, order=order)


def strides_like(sizes, strides, format_name):
    """PyTorch's suggest_memory_format test: strides that step through the dims in the channels_last(_3d)
    order, an N C 1 1 tensor (channel stride equal to the batch's) counting as row-major."""
    order = {"channels_last": (1, 3, 2, 0), "channels_last_3d": (1, 4, 3, 2, 0)}[format_name]
    if len(sizes) != len(order) or strides[1] == 0:
        return False
    least = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return False
        least = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def laid_out(a, format_name=None, dt=None):
    """A copy of array `a` (cast to `dt`, if given) in a memory format: channels_last(_3d) keeps dimension 1
    (the channels) innermost, as PyTorch's strides do; preserve_format keeps the order of `a`'s strides (a dense
    array's exactly, as PyTorch's empty_like does); any other name (or None), row-major."""
    if format_name == "preserve_format":
        if a.flags.c_contiguous:
            return _row_major(a, dt)
        order = kept_order(a.shape, a.strides)
        return _row_major(a.transpose(order), dt).transpose(np.argsort(order))
    if format_name in ("channels_last", "channels_last_3d"):
        return np.moveaxis(_row_major(np.moveaxis(a, 1, -1), dt), -1, 1)
    return _row_major(a, dt)


def _row_major(a, dt):
    return a.copy() if dt is None else cast_array(a, dt, order="C")


def kept_order(sizes, strides):
    """The dims, outermost first, of a dense copy that keeps a layout, as PyTorch orders them: an insertion sort
    from the innermost dim by stride, a larger size outer on a tie; a zero stride (an expanded dim) compares
    with nothing, so that a broadcast copy stays row-major where its strides say nothing."""
    order = list(range(len(sizes) - 1, -1, -1))  # (innermost first while sorting)
    for i in range(1, len(order)):
        at = i
        for j in range(i - 1, -1, -1):
            d0, d1 = order[j], order[at]
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0 or s0 == s1 and sizes[d0] <= sizes[d1]:
                continue  # (no order between them: the sort looks further out)
            if s0 < s1:
                break
            order[j], order[at] = d1, d0
            at = j
    return order[::-1]


def _convert(data, dt, dev, fmt=None):
    out = data
    if dev is not None:
        out = to_device(out, dev)
    if dt is not None and out.dtype != dt:
        out = out.real if dt.kind not in "cb" else out  # (complex to real: warned by to_copy)
        if fmt is None and out.flags.c_contiguous:  # (the usual cast: its layout is row-major either way)
            return cast_array(out, dt)
    else:
        dt = None
        if fmt is None and out is not data:  # (to_device's copy)
            return out
    return laid_out(out, fmt or "preserve_format", dt)


class ToCopy(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, dt, dev, fmt=None):
        ctx.src = (a.array.dtype, a.device)
        return _convert(a.array, dt, dev, fmt)

    @staticmethod
    def backward(ctx, g):  # convert the gradient back to the input's dtype and device
        dt, dev = ctx.src
        if g.array.dtype.kind == "c" and dt.kind != "c":  # a real input of a complex result: the real part
            g = g.real
        return to_copy(g, dtype=dt, device=dev), None, None, None


def to_copy(input, dtype=None, device=None, copy=False, memory_format=None):
    """Convert dtype and/or device (recorded for floating inputs); `memory_format`: a format's name to lay
    the copy out in (laid_out)."""
    dt = None if dtype is None else (get_dtype(dtype).np if not isinstance(dtype, np.dtype) else dtype)
    dev = None
    if device is not None:
        dev = device if not isinstance(device, str) else _device(device)
        if dev.type == input.device.type:  # (by type: 'cpu:0' is the CPU, and minigrad uses one GPU)
            dev = None
        else:
            from ..device import module_for

            module_for(dev)  # a clear error now if CUDA was asked for and is missing
    if dt is not None and dt == input.array.dtype:
        dt = None
    if dt is None and dev is None and not copy and memory_format is None:
        return input
    if dt is not None and dt.kind not in "cb" and input.array.dtype.kind == "c":
        warn_complex_to_real()
    if dt is not None and dt.kind not in "fc":  # integer and bool results leave the graph
        return array_op(lambda a: _convert(a, dt, dev, memory_format), input)
    return ToCopy.apply(input, dt, dev, memory_format)


def warn_complex_to_real():
    """PyTorch's warning for a cast of complex values to a real dtype (bool is their truth): once a process,
    as PyTorch says it, whichever cast comes first (`.float()`, `tensor(complex_array, dtype=float32)`)."""
    warn_once("complex to real", "Casting complex values to real discards the imaginary part")


def _device(spec):
    return device(spec)
