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
    out = np.empty((G, m, b.shape[2]), dtype=np.result_type(a, b))
    with blas.one_blas_thread() if m * k * b.shape[2] < SMALL_PRODUCT else contextlib.nullcontext():
        for i in range(G):
            np.matmul(a[i], b[i], out=out[i])
    return out
