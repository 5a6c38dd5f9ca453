"""Ops without a gradient (comparisons, logical ops, isnan, integer casts, argmax) as one Function.

They have nothing to record for autograd, but inside a minigrad.compile capture every op that reads
a tensor's data and returns a tensor must go through `Function.apply`, where the capture records
ops: a result made outside an op would be taken for a constant, and replayed frozen. Outside a
capture they skip `apply`, which would only build a node for a result with no gradient.
"""
import numpy as np

from ..autograd.recording import hook as _capture
from ..autograd.function import Function
from ..device import array_module
from ..tensor import Tensor


def _run(fn, arrays):
    return (getattr(array_module(arrays[0]), fn) if isinstance(fn, str) else fn)(*arrays)


class ArrayOp(Function):
    """`fn(*arrays)`: fn a function of the array module (a name: "less", "isnan") or of arrays."""

    @staticmethod
    def forward(ctx, fn, *tensors):
        out = _run(fn, [t.array for t in tensors])
        if getattr(out, "dtype", None) is not None and out.dtype.kind in "fc":
            ctx.mark_non_differentiable(out)  # (histc's counts: no gradient, as outside a capture)
        return out

    @staticmethod
    def backward(ctx, *grads):  # (not reached: the result is integer or bool, so nothing flows back)
        raise RuntimeError("this op has no gradient")


def array_op(fn, *tensors):
    """The tensor of `fn` applied to the tensors' arrays, with no gradient (see ArrayOp)."""
    if _capture.recorder is None:  # (_run inlined: comparisons and argmax run in sampling loops)
        arrays = [t.array for t in tensors]
        out = (getattr(array_module(arrays[0]), fn) if type(fn) is str else fn)(*arrays)
        # (a new array, the usual: Tensor's argument handling is for a numpy scalar, a full argmax's)
        return Tensor._output(out, None) if type(out) is np.ndarray else Tensor._wrap(out)
    return ArrayOp.apply(fn, *tensors)
