"""PyTorch's helpers for an argument given as one number or as one per dim (`kernel_size=3` or `(3, 5)`)."""
import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):  # an iterable as a tuple (its length unchecked), anything else repeated n times
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """t reversed, each element n times: a conv's per-dim padding (first dim first) as F.pad's (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))
