"""A chain of elementwise ops as one numba ufunc: minigrad.compile's fusion (minigrad/compiler/fusion.py).

The chain comes as an expression over its inputs x0, x1, ... ("tanh((x0 * x1) + x2)"), each op one
of + - * / unary -, exp, tanh. numba compiles it once per (expression, dtype) into a ufunc with that
one signature, so the inputs broadcast as numpy's do and every operation runs in the arrays' dtype:
without fastmath, + - * / round as numpy's (the same bits); exp and tanh are LLVM's libm calls, not
numpy's SIMD ones, so they may differ from numpy in the last bit (docs/compile.md).
"""
import math

import numpy as np

_DTYPES = (np.float32, np.float64)
_ufuncs = {}  # (expression, number of inputs, dtype) -> ufunc


def supports(*args):
    """args: the chain's input arrays, then its expression (find takes the device from the first
    array). numpy float arrays of one dtype (0-d ones too)."""
    arrays = args[:-1]
    dtype = arrays[0].dtype
    return dtype.type in _DTYPES and all(type(a) is np.ndarray and a.dtype == dtype for a in arrays)


def forward(expr, *arrays):
    """The chain's result, a new array of the broadcast shape."""
    return ufunc(expr, len(arrays), arrays[0].dtype)(*arrays)


def ufunc(expr, n, dtype):
    key = (expr, n, dtype.str)
    fn = _ufuncs.get(key)
    if fn is None:
        import numba

        names = ", ".join(f"x{i}" for i in range(n))
        scope = {"exp": math.exp, "tanh": math.tanh}
        exec(f"def chain({names}):\n    return {expr}\n", scope)  # noqa: S102 (the expression is ours)
        t = numba.from_dtype(dtype)
        fn = _ufuncs[key] = numba.vectorize([t(*([t] * n))], nopython=True, cache=False)(scope["chain"])
    return fn
