"""PyTorch's `sym_*` helpers, which compile-friendly code calls in place of int(), max(), `not`, `x if b else y`, ...
so that a traced size stays symbolic. minigrad traces no sizes symbolically: on plain Python numbers each is the
builtin it stands for, with PyTorch's promotion (float wins) and its refusals."""
import builtins
import math

import numpy as np

_NUMBERS = (np.integer, np.floating, builtins.int, builtins.float)
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def sym_int(a):
    return builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def _numbers(a, b):
    for x in (a, b):
        if not isinstance(x, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(x)}")
    return isinstance(a, (np.floating, builtins.float)) or isinstance(b, (np.floating, builtins.float))


def sym_max(a, b):  # a float on either side makes the result a float: max(1, 1.0) and max(1.0, 1) agree
    return builtins.float(builtins.max(a, b)) if _numbers(a, b) else builtins.max(a, b)


def sym_min(a, b):
    return builtins.float(builtins.min(a, b)) if _numbers(a, b) else builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):  # sym_sum([a, b, c]) or sym_sum(a, b, c)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_constrain_range(size, *, min=None, max=None):
    lo, hi = _INT64_MIN if min is None else min, _INT64_MAX if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    sym_constrain_range(size, min=0 if min is None else min, max=max)
