"""numpy's array memory on 64-byte boundaries, through numpy's allocator hook (NEP 49).

numpy takes array memory from malloc, which aligns it to 16 bytes. A row of 512-bit vector loads
from such an array crosses a cache line on three loads in four, and BLAS's products and the
kernels' loops read and write every array of a step that way. This module gives numpy an
allocator whose arrays of 64 KiB and more start on a cache line (smaller ones come from malloc, as
before). It keeps what numpy's own allocator does for large arrays: asking the kernel for huge
pages (madvise) from 4 MiB on, where numpy's setting (`np._core.multiarray._set_madvise_hugepage`)
says so. Measured on an Intel Xeon: docs/performance.md.

The CPU backend installs it when it first loads (`install()`), so it serves the arrays made after
that in the thread (strictly: the contextvars context) that loaded it, the training loop's.
Arrays made before keep numpy's allocator: each array is freed by the one that made it, so the two
mix safely. MINIGRAD_MALLOC_TUNING=0 in the environment keeps numpy's allocator, as it keeps
glibc's defaults (minigrad/_allocator.py).

The four functions are compiled by numba (`cfunc`, cached on disk like the kernels) and call the C
library's aligned_alloc, malloc, calloc, realloc, free, memset and madvise by name; numpy calls
them with the GIL held or not, as it calls its own.
"""
import ctypes
import os
import sys

import numpy as np

NAME = "minigrad_aligned_64"  # what np._core.multiarray.get_handler_name() reports
ALIGNMENT = 64
LARGE = 1 << 16  # bytes from which an array is aligned
HUGE = 1 << 22  # bytes from which huge pages are asked for (numpy's threshold)
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux's
_API_SET_HANDLER = 304  # PyDataMem_SetHandler's slot in numpy's C-API table (fixed since numpy 1.22)
_installed = None  # the handler's structure and capsule, kept alive while arrays use them


class _Handler(ctypes.Structure):  # numpy's PyDataMem_Handler, version 1
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("ctx", ctypes.c_void_p),
                ("malloc", ctypes.c_void_p), ("calloc", ctypes.c_void_p), ("realloc", ctypes.c_void_p),
                ("free", ctypes.c_void_p)]


def install():
    """Make numpy's new arrays here 64-byte aligned (module docstring); returns whether it applied.
    Needs Linux, a 64-bit build and numba; applies once."""
    global _installed
    if _installed is not None:
        return True
    if (not sys.platform.startswith("linux") or os.environ.get("MINIGRAD_MALLOC_TUNING", "1") == "0"
            or ctypes.sizeof(ctypes.c_void_p) != 8):
        return False
    functions = _compile()
    if functions is None:
        return False
    huge = bool(np._core.multiarray._get_madvise_hugepage())
    handler = _Handler(NAME.encode(), 1, 1 if huge else None, *(f.address for f in functions))
    api = ctypes.pythonapi
    api.PyCapsule_New.restype, api.PyCapsule_New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                                               ctypes.c_void_p]
    api.PyCapsule_GetPointer.restype, api.PyCapsule_GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                                            ctypes.c_char_p]
    capsule = api.PyCapsule_New(ctypes.addressof(handler), b"mem_handler", None)
    table = api.PyCapsule_GetPointer(np._core._multiarray_umath._ARRAY_API, None)
    set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(
        ctypes.c_void_p.from_address(table + _API_SET_HANDLER * ctypes.sizeof(ctypes.c_void_p)).value)
    set_handler(capsule)
    _installed = (handler, capsule, functions)
    return True


def _compile():
    """The four functions compiled (numba cfuncs with numpy's signatures), or None without numba."""
    global _aligned_alloc, _malloc, _calloc, _realloc, _free, _memset, _madvise, _aligned_block
    try:
        import numba
        from llvmlite import ir
        from numba import types
        from numba.core import cgutils
        from numba.extending import intrinsic
    except ImportError:
        return None
    i8p, i64, i32, void = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(32), ir.VoidType()

    def c_function(name, ret, *params):  # the C library's `name` called on integers (pointers: i8* in C)
        def codegen(context, builder, signature, values):
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, params), name)
            args = [context.cast(builder, v, t, types.uint64) for v, t in zip(values, signature.args)]
            r = builder.call(fn, [builder.inttoptr(v, p) if p == i8p else builder.trunc(v, p) if p == i32 else v
                                  for v, p in zip(args, params)])
            if ret == i8p:
                return builder.ptrtoint(r, i64)
            return context.get_dummy_value() if ret == void else builder.sext(r, i64)

        result = types.void if ret == void else types.uintp
        if len(params) == 1:
            return intrinsic(lambda typingctx, a: (result(a), codegen))
        if len(params) == 2:
            return intrinsic(lambda typingctx, a, b: (result(a, b), codegen))
        return intrinsic(lambda typingctx, a, b, c: (result(a, b, c), codegen))

    _aligned_alloc, _malloc = c_function("aligned_alloc", i8p, i64, i64), c_function("malloc", i8p, i64)
    _calloc, _realloc = c_function("calloc", i8p, i64, i64), c_function("realloc", i8p, i8p, i64)
    _free, _memset = c_function("free", void, i8p), c_function("memset", i8p, i8p, i32, i64)
    _madvise = c_function("madvise", i32, i8p, i64, i32)
    u = types.uintp
    signatures = ((_allocate, u(u, u)), (_allocate_zeroed, u(u, u, u)), (_reallocate, u(u, u, u)),
                  (_release, types.void(u, u, u)))
    for cache in (True, False):  # (False: no writable place for numba's cache; compiled for this process)
        try:
            _aligned_block = numba.njit(cache=cache)(_aligned_block_py)
            return [numba.cfunc(sig, cache=cache)(fn) for fn, sig in signatures]
        except RuntimeError:
            if not cache:
                raise


# numpy's allocator functions; ctx is 1 where huge pages are asked for, 0 where not. The C functions
# they call are bound by _compile() (numba intrinsics).
_aligned_alloc = _malloc = _calloc = _realloc = _free = _memset = _madvise = _aligned_block = None


def _aligned_block_py(ctx, n):
    p = _aligned_alloc(ALIGNMENT, (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT)
    if p != 0 and ctx != 0 and n >= HUGE:  # the whole pages inside the block
        lo = (p + _PAGE - 1) // _PAGE * _PAGE
        _madvise(lo, (p + n - lo) // _PAGE * _PAGE, _MADV_HUGEPAGE)
    return p


def _allocate(ctx, n):
    return _malloc(n) if n < LARGE else _aligned_block(ctx, n)


def _allocate_zeroed(ctx, count, size):
    n = count * size
    if n < LARGE:
        return _calloc(count, size)
    p = _aligned_block(ctx, n)
    if p != 0:
        _memset(p, 0, n)
    return p


def _reallocate(ctx, p, n):  # numpy resizes arrays this way only rarely: an unaligned result is fine
    return _realloc(p, n)


def _release(ctx, p, n):
    _free(p)
