"""The CPU backend: kernels compiled by numba (team.py), on numpy arrays of float32 or float64."""
import numpy as np


def floats(*arrays):
    """Whether `arrays` (None entries skipped) are numpy arrays of one dtype, float32 or float64: what
    the kernels compile for. (Asked on every op: a plain loop.)"""
    dtype = None
    for a in arrays:
        if a is None:
            continue
        if type(a) is not np.ndarray:
            return False
        if dtype is None:
            dtype = a.dtype
            if dtype.char not in "fd":
                return False
        elif a.dtype != dtype:
            return False
    return True
