"""Ops without a gradient (comparisons, logical ops, isnan, integer casts, argmax) as one Function.

They have nothing to record for autograd, but every op that reads a tensor's data and returns a
tensor goes through `Function.apply` all the same: that is where minigrad.compile records an op.
A result made outside an op would be taken by a capture for a constant, and replayed frozen.
"""
from ..autograd.function import Function
from ..device import array_module


class ArrayOp(Function):
    """`fn(*arrays)`: fn a function of the array module (a name: "less", "isnan") or of arrays."""

    @staticmethod
    def forward(ctx, fn, *tensors):
        arrays = [t.array for t in tensors]
        return (getattr(array_module(arrays[0]), fn) if isinstance(fn, str) else fn)(*arrays)

    @staticmethod
    def backward(ctx, *grads):  # (not reached: the result is integer or bool, so nothing flows back)
        raise RuntimeError("this op has no gradient")


def array_op(fn, *tensors):
    """The tensor of `fn` applied to the tensors' arrays, with no gradient (see ArrayOp)."""
    return ArrayOp.apply(fn, *tensors)
