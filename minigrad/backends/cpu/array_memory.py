"""numpy's array memory on 64-byte boundaries, through numpy's allocator hook (NEP 49).

numpy takes array memory from malloc, which aligns it to 16 bytes. A row of 512-bit vector loads
from such an array crosses a cache line on three loads in four, and BLAS's products and the
kernels' loops read and write every array of a step that way. This module gives numpy an
allocator whose arrays of 64 KiB and more start on a cache line. It keeps what numpy's own
allocator does for large arrays: asking the kernel for huge pages (madvise) from 4 MiB on, where
numpy's setting (`np._core.multiarray._set_madvise_hugepage`) says so.

Every block is malloc's (or calloc's, or realloc's), a little larger than asked: the array starts
past a header of HEADER bytes, on the next 64-byte boundary for a large one, and the 8 bytes just
before it hold its distance from the block's start, which free and realloc read (glibc's own
aligned_alloc fragments the heap: docs/performance.md).

`tune_process()` installs it (`install()`; never `import minigrad` nor an op), so it serves the
arrays made after that in the thread (strictly: the contextvars context) that called it. Arrays
made before keep numpy's allocator: each array is freed by the one that made it, so the two mix
safely. `uninstall()` gives numpy back the handler it had before, for the arrays made after.

The four functions are compiled by numba (`cfunc`, cached on disk like the kernels) and call the C
library's malloc, calloc, realloc, free, memmove and madvise by name; numpy calls them with the
GIL held or not, as it calls its own.
"""
import ctypes
import sys
import threading

import numpy as np

from . import team

NAME = "minigrad_aligned_64"  # what np._core.multiarray.get_handler_name() reports
ALIGNMENT = 64
LARGE = 1 << 16  # bytes from which an array is aligned to ALIGNMENT (below: to malloc's 16)
HEADER = 16  # bytes before every array's start, the last 8 its distance from the block's start
HUGE = 1 << 22  # bytes from which huge pages are asked for (numpy's threshold)
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux's
_API_SET_HANDLER = 304  # PyDataMem_SetHandler's slot in numpy's C-API table (fixed since numpy 1.22)
_installed = None  # the handler's structure, capsule and functions, once made (alive for the process)
_previous = None  # the handler numpy had before install(), while installed
_lock = threading.Lock()  # two threads may load the backend at once


class _Handler(ctypes.Structure):  # numpy's PyDataMem_Handler, version 1
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("ctx", ctypes.c_void_p),
                ("malloc", ctypes.c_void_p), ("calloc", ctypes.c_void_p), ("realloc", ctypes.c_void_p),
                ("free", ctypes.c_void_p)]


def install():
    """Make numpy's new arrays here 64-byte aligned (module docstring); returns whether it applied.
    Needs Linux, a 64-bit build and numba; not over another allocator someone else gave numpy."""
    global _installed, _previous
    with _lock:
        name = np._core.multiarray.get_handler_name()
        if name == NAME:
            return True
        if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8 or name != "default_allocator":
            return False
        if _installed is None:
            functions = _compile()
            if functions is None:
                return False
            huge = bool(getattr(np._core.multiarray, "_get_madvise_hugepage", lambda: True)())
            handler = _Handler(NAME.encode(), 1, 1 if huge else None, *(f.address for f in functions))
            capsule = _capsule_new(ctypes.addressof(handler), b"mem_handler", None)
            _installed = (handler, capsule, functions)  # arrays made with it point at these until freed
        _previous = _set_handler(_installed[1])  # (numpy returns the handler it had)
        return True


def uninstall():
    """numpy's handler from before install() again, for the arrays made from now on here; returns
    whether one was installed."""
    global _previous
    with _lock:
        if _previous is None or np._core.multiarray.get_handler_name() != NAME:
            return False
        _set_handler(_previous)
        _previous = None
        return True


# (private prototypes: setting argtypes on ctypes.pythonapi's own would change them for everyone)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _set_handler(capsule):
    """numpy's PyDataMem_SetHandler(capsule), from its C-API table: returns the previous handler."""
    table = _capsule_pointer(np._core._multiarray_umath._ARRAY_API, None)
    address = ctypes.c_void_p.from_address(table + _API_SET_HANDLER * ctypes.sizeof(ctypes.c_void_p)).value
    return ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(address)(capsule)


def _compile():
    """The four functions compiled (numba cfuncs with numpy's signatures), or None without numba."""
    global _malloc, _calloc, _realloc, _free, _memmove, _madvise, _peek, _poke, _place
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

    def peek_codegen(context, builder, signature, values):  # the 8-byte word at an address
        return builder.load(builder.inttoptr(context.cast(builder, values[0], signature.args[0], types.uint64),
                                             i64.as_pointer()))

    def poke_codegen(context, builder, signature, values):  # store an 8-byte word at an address
        address, word = (context.cast(builder, v, t, types.uint64) for v, t in zip(values, signature.args))
        builder.store(word, builder.inttoptr(address, i64.as_pointer()))
        return context.get_dummy_value()

    _malloc, _calloc = c_function("malloc", i8p, i64), c_function("calloc", i8p, i64, i64)
    _realloc, _free = c_function("realloc", i8p, i8p, i64), c_function("free", void, i8p)
    _memmove, _madvise = c_function("memmove", i8p, i8p, i8p, i64), c_function("madvise", i32, i8p, i64, i32)
    _peek = intrinsic(lambda typingctx, address: (types.uintp(address), peek_codegen))
    _poke = intrinsic(lambda typingctx, address, word: (types.void(address, word), poke_codegen))
    u = types.uintp
    signatures = ((_allocate, u(u, u)), (_allocate_zeroed, u(u, u, u)), (_reallocate, u(u, u, u)),
                  (_release, types.void(u, u, u)))
    for cache in (True, False):  # (False: no writable place for numba's cache; compiled for this process)
        try:
            _place = numba.njit(cache=cache)(_place_py)
            with team.loading_without_registries():  # (a cfunc is loaded, or compiled, as it is made)
                return [numba.cfunc(sig, cache=cache)(fn) for fn, sig in signatures]
        except RuntimeError:
            if not cache:
                raise


# numpy's allocator functions (ctx: 1 where huge pages are asked for, else 0), on addresses as
# integers. The C functions and the word access they use are bound by _compile() (numba intrinsics).
_malloc = _calloc = _realloc = _free = _memmove = _madvise = _peek = _poke = _place = None
_EXTRA = HEADER + ALIGNMENT  # bytes a block has beyond its array: room for the header and the alignment


def _place_py(ctx, block, n, start):
    """The array's address in a block of at least n + _EXTRA bytes at `block` (0: none), its header
    written; `start`: where the array's bytes are now (0: nowhere yet), moved there if elsewhere."""
    if block == 0:
        return 0
    p = block + HEADER
    if n >= LARGE:
        p = (p + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        if ctx != 0 and n >= HUGE:  # the whole pages inside the array
            lo = (p + _PAGE - 1) // _PAGE * _PAGE
            _madvise(lo, (p + n - lo) // _PAGE * _PAGE, _MADV_HUGEPAGE)
    if start != 0 and start != p:
        _memmove(p, start, n)
    _poke(p - 8, p - block)
    return p


def _allocate(ctx, n):
    return _place(ctx, _malloc(n + _EXTRA), n, 0)


def _allocate_zeroed(ctx, count, size):
    if size != 0 and count > (2**63 - 1 - _EXTRA) // size:  # the byte count would overflow
        return 0
    n = count * size
    return _place(ctx, _calloc(1, n + _EXTRA), n, 0)


def _reallocate(ctx, p, n):  # (realloc keeps the bytes at the old offset; _place moves them if that changed)
    if p == 0:
        return _place(ctx, _malloc(n + _EXTRA), n, 0)
    offset = _peek(p - 8)
    block = _realloc(p - offset, n + _EXTRA)
    return _place(ctx, block, n, block + offset if block != 0 else 0)


def _release(ctx, p, n):
    if p != 0:
        _free(p - _peek(p - 8))
