"""Helpers shared by the fused functional ops: wrapping arrays as Tensors, checking arguments, and
(from minigrad/backends/arrays.py, where numpy and cupy differ) blocked loops, scratch and row sums.
"""
from minigrad import Tensor
from minigrad.autograd.function import Function, once_differentiable, second_order  # noqa: F401 (re-exported)
from minigrad.ops._util import some_id_outside, type_name  # noqa: F401 (re-exported)
from minigrad.backends.arrays import (  # noqa: F401 (re-exported)
    BLOCK, blockwise, col_sum, for_blocks, row_dot, row_sum, rows_per_block, scratch, scratch_like, xp_of,
)


def wrap(a):
    """An array as a Tensor (a backward's return values must be Tensors), None stays None."""
    return None if a is None else Tensor._wrap(a)


_POSITIONS = {"input": 1, "target": 2}  # (where PyTorch's binding names the place of the usual arguments)


def check_sized_pair(input, target, fn):
    """The pointwise losses whose PyTorch code first compares target.size() with input.size() in Python: a
    number or a list given for either is its AttributeError (an array, which has a size, gets check_tensor's)."""
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        for value in (target, input):
            if not isinstance(value, Tensor) and not hasattr(value, "size"):
                raise AttributeError(f"'{type(value).__name__}' object has no attribute 'size'")
        check_tensor(input, "input", fn)
        check_tensor(target, "target", fn)


def check_tensor(x, name, fn, position=None):
    if not isinstance(x, Tensor):
        position = position or _POSITIONS.get(name)
        at = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{at} must be Tensor, not {type_name(x)}")
