"""The CPU backend: kernels compiled by numba (team.py), on numpy arrays of float32 or float64."""
import numpy as np

# numpy's own dtypes, compared by identity first (`==` goes through numpy's dtype conversion, and every
# supports() asks), then by equality for a float32 made anew (from a buffer, with metadata)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


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
            if dtype is not F32 and dtype is not F64 and dtype.char not in "fd":
                return False
        elif a.dtype is not dtype and a.dtype != dtype:
            return False
    return True
