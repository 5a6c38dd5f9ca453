"""dropout on the GPU: the keep-mask (from minigrad's CUDA generator) and the scaling in one kernel."""
from . import kernels


def supports(x, p):
    """float32 and float64 cupy arrays."""
    return x.dtype.char in "fd"


def forward(x, p):
    """(y, keep): keep = u >= p for u uniform; y = x keep / (1 - p)."""
    return kernels.dropout_forward(x, p)


def backward(g, keep, scale):
    return kernels.dropout_backward(g, keep, scale)
