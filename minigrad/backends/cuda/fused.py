"""A chain of elementwise ops as one cupy ElementwiseKernel: minigrad.compile's fusion on a GPU
(the CPU's is cpu/fused.py; the expression is the same: inputs x0, x1, ..., + - * / unary -, exp, tanh).

CUDA's exp and tanh are overloaded for float and double, so the expression is the kernel's body as
it is. The arrays broadcast as cupy's elementwise kernels broadcast them.
"""
_kernels = {}  # (expression, number of inputs) -> ElementwiseKernel


def supports(*args):
    """args: the chain's input arrays, then its expression. cupy float arrays of one dtype."""
    arrays = args[:-1]
    dtype = arrays[0].dtype
    return dtype.kind == "f" and dtype.itemsize in (4, 8) and all(
        hasattr(a, "__cuda_array_interface__") and a.dtype == dtype for a in arrays)


def kernel_source(expr, n):
    """(in_params, out_params, operation, name) of the kernel: one type T for every argument."""
    return (", ".join(f"T x{i}" for i in range(n)), "T y", f"y = {expr}", f"minigrad_chain_{n}")


def forward(expr, *arrays):
    key = (expr, len(arrays))
    kernel = _kernels.get(key)
    if kernel is None:
        import cupy

        kernel = _kernels[key] = cupy.ElementwiseKernel(*kernel_source(expr, len(arrays)))
    return kernel(*arrays)
