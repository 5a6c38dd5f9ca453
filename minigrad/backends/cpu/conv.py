"""The convolutions' stacked products on the CPU: a small one runs on the calling thread alone
(waking OpenBLAS's workers costs more than a small CNN's whole product, and far more when other
processes hold the cores)."""
import contextlib

import numpy as np

from . import blas, floats

SMALL_PRODUCT = 1 << 22  # multiply-adds


def supports(a, b):
    """numpy float arrays of one dtype."""
    return floats(a, b)


def forward(a, b):
    """a (G, m, k) @ b (G, k, n) -> (G, m, n), one 2-D product per group."""
    G, m, k = a.shape
    n = b.shape[2]
    with blas.one_blas_thread() if m * k * n < SMALL_PRODUCT else contextlib.nullcontext():
        if k == 1:  # (a depthwise conv's input gradient: outer products, one broadcast multiply, not G BLAS calls)
            return np.multiply(a, b, dtype=np.result_type(a, b))
        if m == 1 or n == 1:  # (a depthwise conv and its weight gradient: G matrix-vector products, which
            return np.matmul(a, b)  # numpy's stacked matmul runs in one call, far faster than G calls)
        out = np.empty((G, m, n), dtype=np.result_type(a, b))
        for i in range(G):
            np.matmul(a[i], b[i], out=out[i])
    return out
