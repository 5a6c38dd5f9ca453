"""The CPU backend: kernels compiled by numba (team.py), on numpy arrays of float32 or float64."""
import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def floats(*arrays):
    """Whether `arrays` are numpy arrays of one dtype, float32 or float64: what the kernels compile for."""
    dtype = arrays[0].dtype
    return dtype in FLOATS and all(type(a) is np.ndarray and a.dtype == dtype for a in arrays)
