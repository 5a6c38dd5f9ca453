"""GELU on the GPU: one elementwise kernel each way (CUDA's erf, or the tanh form)."""
from . import kernels


def supports(x, approximate):
    """float32 and float64 cupy arrays, either form."""
    return x.dtype.char in "fd"


def forward(x, approximate):
    return kernels.gelu_forward(x, approximate)


def backward(x, y, g, approximate):
    return kernels.gelu_backward(x, g.astype(x.dtype, copy=False), approximate)
