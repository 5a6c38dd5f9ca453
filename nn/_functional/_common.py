"""Helpers shared by the fused functional ops: wrapping arrays as Tensors, checking arguments, and
(from minigrad/backends/arrays.py, where numpy and cupy differ) blocked loops, scratch and row sums.
"""
import numpy as np

from minigrad import Tensor
from minigrad.autograd.function import Function, once_differentiable  # noqa: F401 (re-exported)
from minigrad.backends.arrays import (  # noqa: F401 (re-exported)
    BLOCK, blockwise, col_sum, for_blocks, row_dot, row_sum, rows_per_block, scratch, scratch_like, xp_of,
)


def wrap(a):
    """An array as a Tensor (a backward's return values must be Tensors), None stays None."""
    return None if a is None else Tensor(a)


def check_tensor(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def some_id_outside(ids, n):
    """Whether an integer id in the array `ids` is outside [0, n), in one reduction: seen as unsigned (a
    view, no copy), a negative id is a large one. The ops whose ids are data (class targets, embedding
    rows) ask it in their forwards, so that a replay of a captured step asks it of each call's ids."""
    if not ids.size:
        return False
    if ids.size == 1:  # a generated token's: the number itself, where a reduction of one value costs 2 us
        return not 0 <= int(ids.item()) < n
    u = ids if ids.dtype.kind == "u" else ids.view(_UNSIGNED[ids.dtype.itemsize])
    return int(u.max()) >= n


_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}  # the unsigned dtype of each integer width
