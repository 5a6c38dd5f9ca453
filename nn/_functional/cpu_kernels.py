"""Compiled CPU kernels (numba) for the ops that numpy can only run as many passes over memory.

numpy has one ufunc per elementary operation, so GELU's erf rational is 27 passes over its block
and a layer norm about ten; PyTorch's CPU kernels make one. Written as plain loops and compiled by
numba, each becomes one loop that LLVM vectorizes (AVX2 / AVX-512): GELU's forward at (768, 512)
float32 went from 0.58 ms to 0.14 ms here (PyTorch: 0.10; bench/kernels_bench.py times each op).
The kernels sit in the op's own file, beside the numpy passes they replace, marked
`@cpu_kernels.kernel`:

    @cpu_kernels.kernel
    def _gelu_fwd_compiled(out, x): ...                       # a plain loop over one block

    if cpu_kernels.use(x): blockwise(_gelu_fwd_compiled, ...)  # in the op: numpy arrays, kernels on
    else: ...the numpy passes...

`use(a)` is true for numpy float32 / float64 arrays when numba imports and the kernels are
enabled (MINIGRAD_CPU_KERNELS=0 turns them off; the numpy passes are then used everywhere, as on a
machine without numba). Kernels are compiled on first call, once per argument types, and cached
on disk by numba (`cache=True`: __pycache__, or numba's user cache directory when that is read-only).
They release the GIL, so the ops still run them block by block on all cores (`_common.for_blocks`).

Compiler flags: fused multiply-add, reassociation (vectorized sums) and reciprocal division are
allowed; NaN and infinity semantics are kept (no `nnan`/`ninf`), so a NaN input still gives NaN.
Division never raises (numpy's error model: 0/0 is NaN, as in the numpy passes).

Two helpers kernels may call, defined once numba imports:
- `gemm(address, ilp64, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)`: OpenBLAS's
  row-major cblas_?gemm through the address `gemm_address(dtype)` gives, on arrays A, B, C of one
  dtype (from their first element, with the leading dimensions given). A kernel can then run a
  whole sequence of small products and loops in one call without the GIL (numpy's matmul takes it
  back after each product, and every hand-back between two threads costs a sleeping thread's wake).
- `exp_nonpositive(x)`: exp(x) for x <= 0 (a softmax's shifted scores) that LLVM vectorizes: numba's
  own exp is a scalar call per element. float32: a degree-6 polynomial on a reduced argument (as
  Cephes' expf; relative error under 4e-7, about 3 ulp; numpy's is ~1), 0 below -87 (where
  float32's exp is denormal); float64: exp.

numba's disk cache is keyed on each kernel's own source file: after editing `gemm` or
`exp_nonpositive` here, delete the cached kernels of the files that call them (the *.nbi / *.nbc
files in their __pycache__), or those kernels keep the old code.
"""
import ctypes
import threading

import numpy as np

from ._common import KernelSwitch

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_OPTIONS = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc", "arcp", "nsz"})
switch = KernelSwitch("MINIGRAD_CPU_KERNELS")
set_enabled, enabled = switch.set, switch.enabled  # `with cpu_kernels.enabled(False):` runs the numpy passes
_numba = None  # the module once imported; False when it is not installed
_lock = threading.RLock()  # reentrant: compiling a kernel imports numba under it


def available():
    """True when numba imports (it is imported on the first call, not with minigrad)."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                try:
                    import numba
                except ImportError:
                    _numba = False
                else:
                    _define_helpers(numba)
                    _numba = numba
    return _numba is not False


def gemm(*args):  # replaced by the numba intrinsic when numba imports (see the module docstring)
    raise RuntimeError("cpu_kernels.gemm is callable from compiled kernels only")


def exp_nonpositive(x):  # replaced by a numba-overloaded function when numba imports
    raise RuntimeError("cpu_kernels.exp_nonpositive is callable from compiled kernels only")


_GEMMS = {np.dtype(np.float32): "sgemm", np.dtype(np.float64): "dgemm"}
_gemm_addresses = {}


def gemm_address(dtype):
    """(address of OpenBLAS's row-major cblas_?gemm for `dtype`, whether its integers are 64-bit), or
    None: no OpenBLAS in this process (numpy built on another BLAS), or a dtype without one."""
    dtype = np.dtype(dtype)
    if dtype not in _gemm_addresses:
        found = None
        name = _GEMMS.get(dtype)
        from minigrad.parallel import openblas

        lib = openblas() if name else None
        if lib is not None:
            # numpy's wheels: scipy-openblas, 64-bit integers and a prefix; other builds: plain names
            for symbol, ilp64 in ((f"scipy_cblas_{name}64_", True), (f"cblas_{name}64_", True), (f"cblas_{name}", False)):
                fn = getattr(lib, symbol, None)
                if fn is not None:
                    found = (ctypes.cast(fn, ctypes.c_void_p).value, ilp64)
                    break
        if found is not None and not (available() and _gemm_works(dtype, *found)):
            found = None  # e.g. a 64-bit-integer build under a plain name: the numpy passes run instead
        _gemm_addresses[dtype] = found
    return _gemm_addresses[dtype]




def _define_helpers(numba):
    """Make `gemm` and `exp_nonpositive` (module docstring) once numba has imported."""
    global gemm, exp_nonpositive
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic, overload

    @intrinsic
    def _gemm(typingctx, address, ilp64, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        sig = types.void(address, ilp64, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)

        def codegen(context, builder, signature, args):
            ty = signature.args
            i32, ptr = ir.IntType(32), ir.IntType(8).as_pointer()
            dtype = ty[8].dtype  # the arrays' element type: alpha and beta are passed in it
            real = context.get_value_type(dtype)

            def as_int(k, bits):
                v = context.cast(builder, args[k], ty[k], types.int64)
                return v if bits == 64 else builder.trunc(v, i32)

            def data(k):  # the array's first element
                return builder.bitcast(context.make_array(ty[k])(context, builder, args[k]).data, ptr)

            def call(bits):  # cblas_?gemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
                n = ir.IntType(bits)
                fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, n, n, n, real, ptr, n, ptr, n, real, ptr, n])
                fn = builder.inttoptr(context.cast(builder, args[0], ty[0], types.int64), fnty.as_pointer())
                builder.call(fn, [ir.Constant(i32, 101), as_int(2, 32), as_int(3, 32), as_int(4, bits), as_int(5, bits),
                                  as_int(6, bits), context.cast(builder, args[7], ty[7], dtype), data(8),
                                  as_int(9, bits), data(10), as_int(11, bits),
                                  context.cast(builder, args[12], ty[12], dtype), data(13), as_int(14, bits)])

            with builder.if_else(context.cast(builder, args[1], ty[1], types.boolean)) as (wide, narrow):
                with wide:
                    call(64)
                with narrow:
                    call(32)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _bits_to_float32(typingctx, i):  # reinterpret an int32's bits as a float32
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType())

        return types.float32(types.int32), codegen

    def _exp_nonpositive(x):
        pass

    log2e, ln2_hi, ln2_lo = np.float32(1.4426950408889634), np.float32(0.693359375), np.float32(-2.12194440e-4)
    c0, c1, c2, c3, c4, c5 = (np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                                      4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
    low, half, one, zero = np.float32(-87.0), np.float32(0.5), np.float32(1.0), np.float32(0.0)

    @overload(_exp_nonpositive, inline="always")
    def _exp_nonpositive_impl(x):
        if x != types.float32:
            return lambda x: np.exp(x)

        def expf(x):  # exp(x) = 2^n exp(r), r = x - n ln 2 in [-ln2/2, ln2/2]; ln 2 in two parts for accuracy
            xc = max(x, low)
            n = np.floor(xc * log2e + half)
            r = xc - n * ln2_hi - n * ln2_lo
            p = ((((c0 * r + c1) * r + c2) * r + c3) * r + c4) * r + c5
            p = p * (r * r) + r + one
            e = p * _bits_to_float32((np.int32(n) + np.int32(127)) << np.int32(23))  # times 2^n
            e = zero if x < low else e
            return x if x != x else e  # NaN stays NaN

        return expf

    gemm, exp_nonpositive = _gemm, _exp_nonpositive


def use(a):
    """True when `a` is a numpy float32 / float64 array and the compiled kernels are enabled."""
    return switch.on and type(a) is np.ndarray and a.dtype in _FLOATS and available()


def is_enabled():
    return switch.on


class kernel:
    """A function compiled by numba on its first call (callers check `use` first)."""

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __call__(self, *args):
        c = self._compiled
        if c is None:
            # the lock guards making the dispatcher; numba compiles each signature on its first call
            # (under its own lock, so threads calling a new kernel at once are safe)
            with _lock:
                if self._compiled is None:
                    available()
                    try:
                        self._compiled = _numba.njit(**_OPTIONS)(self.py_func)
                    except RuntimeError:  # no writable place for numba's cache: compile for this process only
                        self._compiled = _numba.njit(**dict(_OPTIONS, cache=False))(self.py_func)
            c = self._compiled
        return c(*args)


@kernel
def _gemm_product(C, A, B, address, ilp64):  # C = A B^T through `gemm`
    it = A.itemsize
    gemm(address, ilp64, 111, 112, C.shape[0], C.shape[1], A.shape[1], 1.0, A, A.strides[0] // it, B,
         B.strides[0] // it, 0.0, C, C.strides[0] // it)


def _gemm_works(dtype, address, ilp64):
    """One small product with leading dimensions larger than the rows, against numpy's, before the
    symbol is trusted: the integer width is read from its name, which a build may not follow."""
    A = np.arange(21, dtype=dtype).reshape(3, 7)[:, 1:6]
    B = np.arange(20, dtype=dtype).reshape(4, 5)[:, ::-1].copy()
    C = np.full((3, 6), -7.0, dtype=dtype)
    _gemm_product(C[:, :4], A, B, address, ilp64)
    return bool(np.array_equal(C[:, :4], A @ B.T) and np.all(C[:, 4:] == -7.0))
