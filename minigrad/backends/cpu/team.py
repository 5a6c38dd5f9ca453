"""Compiling CPU kernels with numba, and the thread team they share their work out on.

numpy has one ufunc per elementary operation, so GELU's erf rational is 27 passes over memory and a
layer norm about ten. Written as plain loops and compiled by numba, each becomes one loop that LLVM
vectorizes. The CPU backend's files (gelu.py, layer_norm.py, ...) mark theirs `@team.kernel`:

    @team.kernel
    def gelu_rows(out, x): ...                          # a plain loop over one block

    @team.kernel(parallel=True)
    def gelu_team(out, x, parts):                       # the same, each team thread on its share
        for p in team.prange(parts): ...

Kernels are compiled on first call, once per argument types, and cached on disk by numba
(`cache=True`: __pycache__, or numba's user cache directory when that is read-only). They release
the GIL. A cached kernel loads without numba's registries of typing and lowering rules, which only
compiling reads (`_load_cached`): that load is most of a small script's first step otherwise.

The thread team. `@kernel(parallel=True)` marks a kernel whose outer loop is a `prange` over
independent shares; numba runs it on its OpenMP (or TBB) threads, `threads()` of them, which run
compiled code with no GIL and spin a while between jobs, as PyTorch's OpenMP threads do (a parked
Python thread or a sleeping OpenBLAS worker takes tens of microseconds to wake, a large part of a
small op). A team kernel's threads call a plain kernel on their share (a loop written inside a
prange compiles worse): a kernel named inside another is numba's dispatcher of its plain form, whose
code numba links into the caller and optimizes again, and inside a team kernel four times over (the
parallel loop's body and numba's three wrappers around it each link and compile it again: a team
kernel took 3x its plain kernel's compile time). So a kernel named inside a team kernel is called
through a symbol bound to its plain form's compiled function (`_call_by_symbol`): the same code as a
plain call, compiled once.
Shares are cut so that no result depends on the thread that computed it: one thread runs the same
team code, so a step is the same bits on one thread and on many (tested). (Linear's products are
cut in `threads()` shares, one product on one thread: at a GPT's shapes each share takes BLAS's
code path for the whole, and the bits are numpy's; a skinny product, whose shares are small enough
for BLAS's small-matrix path, may round differently for another thread count.) Where numba has only
its fallback layer (which sleeps between jobs and aborts when two threads launch at once), and in a
child forked after GNU OpenMP started (which cannot use it), `has_team()` is false and team kernels
run as plain loops, compiled without `parallel` (their sums may round differently). An exception
raised inside a team is dropped by numba: team kernels run on inputs their op has checked.

Compiler flags: fused multiply-add, reassociation (vectorized sums) and reciprocal division are
allowed; NaN and infinity semantics are kept (no `nnan`/`ninf`), so a NaN input still gives NaN.
Division never raises (numpy's error model: 0/0 is NaN, as in the numpy passes).

Helpers kernels may call, defined once numba imports (and `prange`, numba's, for team kernels):
- `gemm(address, ilp64, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)`: BLAS's
  row-major cblas_?gemm through the address `blas.gemm_address(dtype)` gives, on arrays A, B, C of
  one dtype (from their first element, with the leading dimensions given). A kernel can then run a
  whole sequence of small products and loops in one call without the GIL.
- `exp_nonpositive(x)`: exp(x) for x <= 0 (a softmax's shifted scores) that LLVM vectorizes: numba's
  own exp is a scalar call per element. float32: a degree-6 polynomial on a reduced argument (as
  Cephes' expf; relative error under 4e-7, about 3 ulp; numpy's is ~1), 0 below -87 (where
  float32's exp is denormal); float64: exp.
- `tanh(x)`: tanh that LLVM vectorizes (numba's is a scalar call): float32, an odd polynomial below
  |x| = 0.4 and (1 - e) / (1 + e), e = exp_nonpositive(-2|x|), above (at most 3 ulp from the C
  library's tanh, odd bit for bit); float64: np.tanh.
- `max_of(x, n)`: the largest of x[:n] (n >= 1, x 1-D float32 or float64) that LLVM vectorizes: a
  float max it vectorizes only under no-NaN math, so this compares the floats' bits as integers,
  mapped so that integer order is float order (negatives' magnitude bits flipped). A NaN whose
  sign bit is clear comes out as NaN; one whose sign bit is set (x86's 0/0) as the smallest value,
  so a caller that must see every NaN lets it through its own arithmetic (a softmax's exp does).
- `share(n, p, parts, grain)`: part p of [0, n) (`GRAIN` for elementwise kernels, 1 for rows).

numba's disk cache is keyed on each kernel's own source file: after editing `gemm`,
`exp_nonpositive`, `tanh`, `max_of` or `share` here (or a kernel another file's kernel calls), delete the cached
kernels of the files that call them (the *.nbi / *.nbc files in their __pycache__), or those
kernels keep the old code (a team kernel's calls of kernels excepted: they go through symbols).
"""
import contextlib
import ctypes
import functools
import importlib.util
import os
import sys
import threading
import time
import types
import warnings
import zlib

import numpy as np

_OPTIONS = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc", "arcp", "nsz"})
_numba = None  # the module once imported; False when it is not installed
_lock = threading.RLock()  # reentrant: compiling a kernel imports numba under it


def available():
    """True when numba imports (it is imported on the first call, not with minigrad)."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                try:
                    numba = _import_numba()
                except ImportError:
                    _numba = False
                else:
                    _compile_without_scipy_linalg()
                    _define_helpers(numba)
                    _numba = numba
    return _numba is not False


@contextlib.contextmanager
def _refusing(*names):
    """Within: `import name` fails at once for each of `names` not imported yet (what a library's
    optional import then sees as not installed); afterwards they import as before."""
    refused = [name for name in names if name not in sys.modules]
    for name in refused:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in refused:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


class _ImportedOnUse:
    """A module's stand-in that imports it at its first attribute read (put in sys.modules for
    an import, it leaves it at that read: the import then finds the module itself)."""

    __spec__ = None  # (what the import system asks of a module in sys.modules: not a read)

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if sys.modules.get(self._name) is self:
            del sys.modules[self._name]
        return getattr(importlib.import_module(self._name), attr)


@contextlib.contextmanager
def _imported_on_use(name):
    """Within: `import name` (not imported yet) gives an `_ImportedOnUse` stand-in, which those
    imports keep; afterwards `import name` imports it as before."""
    stand_in = None
    if name not in sys.modules:
        stand_in = sys.modules[name] = _ImportedOnUse(name)
    try:
        yield
    finally:
        if stand_in is not None and sys.modules.get(name) is stand_in:
            del sys.modules[name]


def _import_numba():
    """`import numba` without four imports it makes only in case they are needed, a sizeable part of
    a small script's first step: scipy, imported only to check its version (any scipy that runs on the
    numpy numba accepts passes); yaml, for a .numba_config.yaml in the working directory, which
    numba reads again before every compile: where there is none now, yaml is imported when numba reads
    one; and importlib.metadata, for the entry points of numba's extensions, which numba loads before a
    compile (and minigrad's cached kernels do not need): imported when numba first looks for them; and
    numba.experimental (jitclass, first-class function types: ~3% of numba's import), which numba's
    package only binds as an attribute: imported at the first read of `numba.experimental.<name>`, or
    by numba's first compile (its target context imports it)."""
    refused = ["scipy"]
    if not os.path.exists(".numba_config.yaml"):
        refused.append("yaml")
    with _refusing(*refused), _imported_on_use("importlib.metadata"), _imported_on_use("numba.experimental"):
        import numba
    config = numba.core.config
    if "yaml" in refused and getattr(config, "_HAVE_YAML", True) is False and importlib.util.find_spec("yaml"):
        config._HAVE_YAML, config.yaml = True, _ImportedOnUse("yaml")
    return numba


def _compile_without_scipy_linalg():
    """Have numba's registries (which its first compile loads) import its numpy-function module without
    scipy.linalg (below). CPUContext.refresh loads them: it runs before every compile, and is
    where numba would import that module."""
    from numba.core.cpu import CPUContext

    refresh = CPUContext.refresh
    if getattr(refresh, "_without_scipy_linalg", False):
        return

    def refresh_without_scipy_linalg(self):
        _import_arraymath_without_scipy()
        refresh(self)

    refresh_without_scipy_linalg._without_scipy_linalg = True
    CPUContext.refresh = refresh_without_scipy_linalg


def _load_cached(cache, sig, target_context):
    """numba's `Cache.load_overload` without its first step, the target context's `refresh()`.

    Before it loads a function from its disk cache, numba refreshes its target context: it imports
    and registers every typing and lowering rule it has (~0.2 s, most of a small script's first step),
    which only compiling uses. Loading links the cached object code against numba's runtime (NRT),
    which is all of the refresh that loading needs (the C helpers and math functions are bound when
    the context is made; a parallel function starts its threads in its own reload step). A miss
    returns None, and numba then compiles, its compiler refreshing the contexts first."""
    with _without_lock_events():
        _initialize_runtime(target_context, cache.cache_path)
        with cache._guard_against_spurious_io_errors():
            try:
                return cache._load_overload(sig, target_context)
            except _StaleCallee:  # a team kernel whose callee changed: compiled again
                return None


def _initialize_runtime(target_context, directory):
    """numba's `rtsys.initialize`, its few functions' object code read from a file in `directory`, where numba's
    cache keeps the kernels (NUMBA_CACHE_DIR where set, else the package's __pycache__, or the user's cache
    directory where that is read-only), so that a read-only install reads it too.

    numba compiles its runtime's functions (reference counts, atomics) from LLVM IR in every process,
    at its first load of a function, a sizeable part of a run's start; loading them compiled is a
    kernel's load. Where anything here fails (a numba whose internals differ), numba's own way runs."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import rtsys

    with global_compiler_lock:
        if getattr(rtsys, "_init", False):
            return
        try:
            library = _runtime_library(target_context, directory)
        except Exception:
            library = None
        if library is None:
            return rtsys.initialize(target_context)
        rtsys._library, rtsys._init = library, True


def _runtime_library(target_context, directory):
    """The runtime's library, read from its file in `directory`, or compiled and written there when the file is absent,
    unreadable, or not this machine's and numba's (it holds its key, numba's and llvmlite's versions and the
    machine code's target, as numba's cache index does, and a checksum: damaged machine code is never run).
    None where numba's settings change the runtime it compiles (NRT_STATS, DEBUG_NRT)."""
    from llvmlite import binding as ll
    from numba.core import config
    from numba.core.runtime import _nrt_python, nrtdynmod

    from ..._atomic_files import atomic_write

    if config.NRT_STATS or config.DEBUG_NRT:
        return None
    codegen = target_context.codegen()
    for name, address in _nrt_python.c_helpers.items():  # (the C functions, as numba registers them)
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    key = repr((_numba.__version__, ll.llvm_version_info, codegen.magic_tuple())).encode() + b"\n"
    path = os.path.join(directory, f"nrt-{zlib.crc32(key):08x}.nbo")
    try:
        with open(path, "rb") as f:
            data = f.read()
        size, crc, body = int.from_bytes(data[len(key):][:8], "little"), data[len(key) + 8:][:4], data[len(key) + 12:]
        if not data.startswith(key) or crc != zlib.crc32(body).to_bytes(4, "little") or size > len(body):
            raise ValueError(f"{path} is not this runtime's")
        return codegen.unserialize_library(("nrt", "object", (body[:size], body[size:])))
    except Exception:  # none yet, damaged, or another's: compiled, and written for the next process
        pass
    ir_module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(ir_module)
    library.finalize()
    _, _, (obj, bitcode) = library.serialize_using_object_code()
    body = obj + bitcode

    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(key + len(obj).to_bytes(8, "little") + zlib.crc32(body).to_bytes(4, "little") + body)

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, write)
    except OSError:  # nowhere writable: compiled in each process, as numba does
        pass
    return library


@contextlib.contextmanager
def _without_lock_events():
    """Within: llvmlite's calls skip numba's "numba:llvm_lock" events. numba sends a start and an end
    event around every call into LLVM (Python that costs more than the call itself), for its compile
    timers; linking one cached kernel makes over a hundred calls, making numba's target context a few
    hundred. A kernel's or cfunc's own timers then leave out its LLVM time. The callbacks are taken
    out and put back while holding llvmlite's own lock, so no other thread is between its start and
    end events. Where llvmlite's lock has another layout, the events stay."""
    import llvmlite.binding as ll

    lock = getattr(getattr(ll.ffi, "lib", None), "_lock", None)
    callbacks, inner = getattr(lock, "_cblist", None), getattr(lock, "_lock", None)
    if not isinstance(callbacks, list) or inner is None:
        yield
        return
    with inner:
        numba_events = [cb for cb in callbacks if getattr(cb[0], "__module__", None) == "numba.core.base"]
        for cb in numba_events:
            callbacks.remove(cb)
    try:
        yield
    finally:
        with inner:
            callbacks[:0] = numba_events


def _can_load_cached(cache):
    """Whether numba's cache object has the layout `_load_cached` uses (else numba's own load stays)."""
    return all(hasattr(cache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors", "cache_path"))


def _typeof_without_masked_check(dispatcher):
    """Have `dispatcher` (a kernel's) type a plain ndarray argument itself, as numba's ndarray rule
    does, less that rule's question whether the array is a numpy.ma.MaskedArray: asking imports
    numpy.ma, at the first call of the process's first kernel (part of every first step), and an
    array whose type is exactly ndarray is not one. Anything else is typed by numba."""
    from numba.core import types
    from numba.np.numpy_support import from_dtype, map_layout

    typeof_pyval = dispatcher.typeof_pyval
    active = getattr(dispatcher, "_types_active_call", None)  # (numba's record of the types it was called with)

    def typeof_plain_arrays(val):
        if type(val) is not np.ndarray or active is None:
            return typeof_pyval(val)
        try:
            tp = types.Array(from_dtype(val.dtype), val.ndim, map_layout(val), readonly=not val.flags.writeable)
        except Exception:  # a dtype numba does not take: its own rule says so
            return typeof_pyval(val)
        active.add(tp)
        return tp

    dispatcher.typeof_pyval = typeof_plain_arrays


def _load_without_registries(dispatcher):
    """Have `dispatcher` (a kernel's) load from numba's cache by `_load_cached`, and its first call
    of a signature skip numba's search of the installed packages for numba extensions to load: a
    compile loads them anyway (the target context's refresh does, before compiling). Only minigrad's
    functions load so; a user's own numba code loads as numba does it."""
    cache = getattr(dispatcher, "_cache", None)
    if _can_load_cached(cache):
        cache.load_overload = functools.partial(_load_cached, cache)
        if hasattr(dispatcher, "_compilation_chain_init_hook"):
            dispatcher._compilation_chain_init_hook = _no_extensions_before_load


def _no_extensions_before_load():
    pass


@contextlib.contextmanager
def loading_without_registries():
    """Within: numba's cached functions load by `_load_cached` (for `numba.cfunc`, which loads as it
    is made). Held under numba's compiler lock, which every load takes, so no other thread's load
    sees the swap."""
    from numba.core.caching import Cache
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock, _without_lock_events():
        if not _can_load_cached(Cache):
            yield
            return
        original = Cache.load_overload
        Cache.load_overload = _load_cached
        try:
            yield
        finally:
            Cache.load_overload = original


def _import_arraymath_without_scipy():
    """Import numba's numpy-function module (which numba's registries import) without the
    0.24 s import of all of scipy.linalg it makes, where scipy is installed, only to set one flag:
    whether a BLAS is there for its `np.correlate`/`np.convolve` (`_HAVE_BLAS`). The flag is set to
    what that import would have found, so numba behaves as it would have (code that uses the BLAS
    imports scipy itself when compiled); scipy.linalg is imported at most once someone uses it."""
    name = "scipy.linalg.cython_blas"
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules or name in sys.modules:
        return  # (already imported, or scipy.linalg's cost already paid: nothing to save)
    try:
        with _refusing(name):  # (refused at once, importing no parent)
            import numba.np.arraymath as arraymath
    except Exception:  # a numba that imports it otherwise: its own first kernel will
        return
    if hasattr(arraymath, "_HAVE_BLAS"):
        arraymath._HAVE_BLAS = importlib.util.find_spec("scipy") is not None


def started():
    """Whether numba has been imported here (by `available()`): its start-up is paid."""
    return _numba is not None and _numba is not False


def full_vector_width():
    """On AVX-512 CPUs, let LLVM vectorize at 512 bits: its tuning for Intel's prefers 256 (older
    Xeons clocked down for 512-bit code; the BLAS products run 512-bit code anyway), and the kernels'
    polynomials do more work per instruction at 512. Done through numba's NUMBA_CPU_FEATURES (the
    host's features, less that preference), which takes effect before numba's first compile, and so
    for this process's other numba code and its children too: part of `tune_process()`, never done on
    import. A NUMBA_CPU_NAME or NUMBA_CPU_FEATURES the user set is kept. Returns whether it set it."""
    if not available() or "NUMBA_CPU_FEATURES" in os.environ or "NUMBA_CPU_NAME" in os.environ:
        return False
    from numba.core.codegen import get_host_cpu_features

    features = get_host_cpu_features()
    if "+avx512f" not in features.split(","):
        return False
    os.environ["NUMBA_CPU_FEATURES"] = _numba.config.CPU_FEATURES = features + ",-prefer-256-bit"
    return True


def gemm(*args):  # replaced by the numba intrinsic when numba imports (see the module docstring)
    raise RuntimeError("team.gemm is callable from compiled kernels only")


def prange(*args):  # numba.prange once numba imports: a parallel kernel's loop over independent items
    return range(*args)


def exp_nonpositive(x):  # replaced by a numba-overloaded function when numba imports
    raise RuntimeError("team.exp_nonpositive is callable from compiled kernels only")


def tanh(x):  # replaced by a numba-overloaded function when numba imports
    raise RuntimeError("team.tanh is callable from compiled kernels only")


def max_of(x, n):  # replaced by a numba-overloaded function when numba imports
    raise RuntimeError("team.max_of is callable from compiled kernels only")


def _define_helpers(numba):
    """Make `gemm`, `exp_nonpositive`, `tanh` and `max_of` (module docstring) once numba has imported."""
    global gemm, exp_nonpositive, tanh, max_of, prange
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic, overload, typeof_impl

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
    def _float_bits(typingctx, x):  # a float's bits as the signed integer of its width
        bits = types.int32 if x == types.float32 else types.int64

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(bits.bitwidth))

        return bits(x), codegen

    @intrinsic
    def _bits_float(typingctx, i):  # the inverse
        real = types.float32 if i == types.int32 else types.float64

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(real))

        return real(i), codegen

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
            e = p * _bits_float(np.int32((np.int32(n) + np.int32(127)) << np.int32(23)))  # times 2^n
            e = zero if x < low else e
            return x if x != x else e  # NaN stays NaN

        return expf

    def _tanh(x):
        pass

    # tanh's odd Taylor series, x (1 + x^2 (t3 + x^2 (t5 + ...))), below |x| = 0.4 (the first term left out,
    # x^13's, is under one float32 ulp there); above, (1 - e) / (1 + e) with e = exp(-2|x|) >= 0.45 loses
    # less than a bit to the subtraction
    t3, t5, t7, t9, t11 = (np.float32(c) for c in (-1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925))
    small, minus_two = np.float32(0.4), np.float32(-2.0)

    @overload(_tanh)  # (not inline="always": numba's SSA pass then warns on its two selects; LLVM inlines it)
    def _tanh_impl(x):
        if x != types.float32:
            return lambda x: np.tanh(x)

        def tanhf(x):  # both forms computed, then one selected: a select vectorizes, a branch does not
            x2 = x * x
            near_zero = x * (one + x2 * (t3 + x2 * (t5 + x2 * (t7 + x2 * (t9 + x2 * t11)))))
            e = _exp_nonpositive(minus_two * abs(x))
            t = (one - e) / (one + e)
            far = t if x >= zero else -t  # (NaN: e is NaN, and so is t)
            return near_zero if abs(x) < small else far

        return tanhf

    def _max_of(x, n):
        pass

    @overload(_max_of, inline="always")
    def _max_of_impl(x, n):
        int_type = np.int32 if x.dtype == types.float32 else np.int64
        smallest, magnitude = int_type(np.iinfo(int_type).min), int_type(np.iinfo(int_type).max)
        sign = int_type(8 * np.dtype(int_type).itemsize - 1)

        def max_of(x, n):  # key(f) = bits(f), magnitude bits flipped when negative: its own inverse
            k = smallest  # (kept in its width: numba widens int32 arithmetic to int64)
            for j in range(n):
                b = _float_bits(x[j])
                k = max(k, int_type(b ^ ((b >> sign) & magnitude)))
            return _bits_float(int_type(k ^ ((k >> sign) & magnitude)))

        return max_of

    # a kernel named in another kernel is numba's dispatcher of its plain-loop form: a team kernel's
    # threads each call it on their share (numba compiles a loop written inside a prange worse)
    @typeof_impl.register(kernel)
    def _typeof_kernel(val, c):
        if getattr(_compiling, "team", False):
            return val._by_symbol()
        return types.Dispatcher(val._plain())

    gemm, exp_nonpositive, tanh, max_of, prange = _gemm, _exp_nonpositive, _tanh, _max_of, numba.prange


_said_compiling = False


def _say_if_compiling(dispatcher):
    """Once per process, where a kernel has nothing in numba's disk cache yet: say on the console that the
    kernels are being compiled (seconds each, the first run on a machine only), so a long first step is
    not taken for a hang."""
    global _said_compiling
    if _said_compiling:
        return
    try:
        index = dispatcher._cache._cache_file._index_path  # numba's cache index of this function
    except AttributeError:  # another numba's layout: say nothing
        return
    if not os.path.exists(index):
        _said_compiling = True
        print("minigrad: compiling CPU kernels for this machine (once: they are cached for later runs)",
              file=sys.stderr, flush=True)


def _compile_quietly(dispatcher, team=False):
    """Compile `dispatcher`'s kernels without numba's internal-check warnings (NumbaIRAssumptionWarning,
    which asks for a bug report to numba): a user can do nothing about them, and a first run on a machine
    should say only that kernels are compiling. The filter wraps numba's compiler, which runs only when
    neither of numba's caches (memory, disk) holds the signature, and not a kernel's first call in a
    process: leaving `warnings.catch_warnings` makes Python forget which warnings it has shown, so that a
    script's warning (shown once per line) would show again after each kernel met for the first time."""
    compiler = dispatcher._compiler
    compile = compiler.compile

    def compile_quietly(*args, **kws):
        # (`team`: whether the kernels named in the one compiling are called through symbols: set
        # for each compile, as a team kernel's compile compiles its plain callees inside it)
        before, _compiling.team = getattr(_compiling, "team", False), team
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", _numba.errors.NumbaIRAssumptionWarning)
                return compile(*args, **kws)
        finally:
            _compiling.team = before

    compiler.compile = compile_quietly


_compiling = threading.local()  # .team: whether the kernel compiling now is a team kernel


class _StaleCallee(Exception):
    """A cached team kernel's callee no longer has the types it was compiled against: compile it again."""


def _call_by_symbol(callee):
    """A numba function that calls `callee`'s plain form through a symbol, for a team kernel (module docstring).

    Typing it compiles the plain form for the argument types, as a call of numba's dispatcher does; the
    call is to a declared function, bound (`_bind`) to that compiled function's address, so numba links
    none of its code into the team kernel. The team kernel's library records the binding (numba runs a
    library's `_reload_init` before loading it from its disk cache), so a cached team kernel binds its
    callees again before its machine code is loaded."""
    from numba.core import cgutils
    from numba.core import types as nb
    from numba.extending import intrinsic

    @intrinsic
    def call(typingctx, *args):
        sig = nb.Dispatcher(callee._plain()).get_call_type(typingctx, args, {})

        def codegen(context, builder, signature, llargs):
            name = _bind(callee, sig.args, sig.return_type)
            context.active_code_library._reload_init.add(
                functools.partial(_bind_saved, callee.py_func.__module__, callee.__name__, sig.args, sig.return_type,
                                  name))
            values = cgutils.unpack_tuple(builder, llargs[0], len(args))
            values = [context.cast(builder, v, a, b) for v, a, b in zip(values, args, sig.args)]
            fn = cgutils.get_or_insert_function(
                builder.module, context.call_conv.get_function_type(sig.return_type, sig.args), name)
            status, result = context.call_conv.call_function(builder, fn, sig.return_type, sig.args, values)
            with cgutils.if_unlikely(builder, status.is_error):  # (as numba's call of a dispatcher)
                context.call_conv.return_status_propagate(builder, status)
            return result

        return sig.return_type(nb.StarArgTuple(args)), codegen

    return call


def _bind(callee, argtypes, return_type):
    """Bind the symbol of `callee`'s plain form for `argtypes` to its compiled function (compiled or loaded
    from the disk cache now where this process has none), and return the symbol's name. The name is
    the kernel's and its signature's, the same in every process, as a cached caller's machine code needs."""
    import hashlib

    from llvmlite import binding as ll

    dispatcher = callee._plain()
    dispatcher.compile(argtypes)
    compiled = dispatcher.overloads[tuple(argtypes)]
    if compiled.signature.return_type != return_type:  # (a caller cached before the callee's source changed)
        raise _StaleCallee(f"{callee.__name__}{argtypes} returns {compiled.signature.return_type}")
    signature = f"{callee.py_func.__module__}.{callee.__name__}{tuple(argtypes)} -> {return_type}"
    name = "minigrad.kernel." + hashlib.sha256(signature.encode()).hexdigest()
    ll.add_symbol(name, compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name))
    return name


def _bind_saved(module, qualname, argtypes, return_type, name):
    """`_bind` for a team kernel loaded from numba's disk cache, before its machine code is."""
    callee = getattr(importlib.import_module(module), qualname, None)
    if not isinstance(callee, kernel):
        raise _StaleCallee(f"{module}.{qualname} is not a kernel")
    try:
        bound = _bind(callee, argtypes, return_type)
    except _StaleCallee:
        raise
    except Exception as e:  # (no longer compiles for these types)
        raise _StaleCallee(str(e)) from e
    if bound != name:
        raise _StaleCallee(f"{name} is now {bound}")


class kernel:
    """A function compiled by numba on its first call (callers check `available()` first).

    `@kernel(parallel=True)`: the function's outer loop is a `prange` over independent items, which
    numba runs on a team of native threads (`threads()`) when it can, and as a plain loop otherwise.
    """

    def __new__(cls, fn=None, parallel=False):
        if fn is None:  # @kernel(parallel=True)
            return lambda f: cls(f, parallel)
        return super().__new__(cls)

    def __init__(self, fn, parallel=False):
        self.py_func = fn
        self.parallel = parallel
        self._compiled = None
        self._team_compiled = None
        self._symbol_call = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def _compile(self, team):
        options = dict(_OPTIONS, parallel=True) if team else _OPTIONS
        fn = self.py_func
        if team:  # a second function on the same code: numba's disk cache keys its files on the name
            fn = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            fn.__qualname__ = self.py_func.__qualname__ + "_team"
        try:
            with _without_lock_events():  # (the process's first dispatcher makes numba's target context)
                compiled = _numba.njit(**options)(fn)
        except RuntimeError:  # no writable place for numba's cache: compile for this process only
            return _numba.njit(**dict(options, cache=False))(fn)
        _load_without_registries(compiled)
        _typeof_without_masked_check(compiled)
        _say_if_compiling(compiled)
        _compile_quietly(compiled, team)
        return compiled

    def _plain(self):
        """numba's dispatcher of the plain-loop form (compiled without `parallel`)."""
        if self._compiled is None:
            with _lock:
                available()
                if self._compiled is None:
                    self._compiled = self._compile(False)
        return self._compiled

    def _by_symbol(self):
        """The numba type of the function a team kernel calls this one by (`_call_by_symbol`), made once."""
        if self._symbol_call is None:
            from numba.core.registry import cpu_target

            call, typing = _call_by_symbol(self), cpu_target.typing_context
            typing.refresh()  # (registers the new function's typing: a compile refreshes it anyway)
            self._symbol_call = typing.resolve_value_type(call)
        return self._symbol_call

    def plain(self, *args):
        """Call the plain-loop form on this thread (work too small to share out)."""
        return self._plain()(*args)

    def entry(self, *args):
        """The plain form's compiled function for arguments of the types of `args` (compiled now where new),
        to be called with arguments of exactly those types (numba checks none: a replay's prepared step,
        whose arrays it makes itself or checks), without the dispatcher's look-up by type at each call."""
        dispatcher = self._plain()
        return dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))

    def on_team(self):
        """Whether a call runs on the thread team (and shares the work out itself)."""
        return self.parallel and has_team()

    threads = staticmethod(lambda: threads())  # the parts a team kernel is asked to cut its work in

    def __call__(self, *args):
        # one thread is the team's code on one thread: the same bits as on many
        team = self.parallel and has_team()
        c = self._team_compiled if team else self._compiled
        if c is None:
            # the lock guards making the dispatcher; numba compiles each signature on its first call
            # (under its own lock, so threads calling a new kernel at once are safe)
            with _lock:
                available()
                if team:
                    if self._team_compiled is None:
                        self._team_compiled = self._compile(True)
                    c = self._team_compiled
                else:
                    if self._compiled is None:
                        self._compiled = self._compile(False)
                    c = self._compiled
        if team:
            n = threads()
            _team_size_for_this_thread(_load.team_size(n) if n > 1 else 1)
        return c(*args)


# ---- the team: numba's native threads for parallel kernels --------------------------------------
_layer_ok = None  # whether numba's threading layer here is one to use: None until first asked
_launched = False  # the team's threads were started (after a fork, the child has none: _after_fork)
_team_tls = threading.local()


_threads_for = (None, 1)  # ((what num_threads() read), the answer then)
# threads() runs at every kernel call: it reads the variables from the mapping behind os.environ (its
# writes land there) without decoding them, which costs more than the lookup itself
_environ_get = os.environ._data.get if os.name == "posix" else os.environ.get
_MINIGRAD_NUM_THREADS, _OMP_NUM_THREADS = (os.fsencode(k) if os.name == "posix" else k
                                           for k in ("MINIGRAD_NUM_THREADS", "OMP_NUM_THREADS"))
_requested = None  # set_num_threads(n)'s n


def set_num_threads(n):
    """The team's size from now on (minigrad.set_num_threads: the team and BLAS); None: read from the
    environment again, as before any set_num_threads. Returns the request it replaced."""
    global _requested
    before, _requested = _requested, None if n is None else int(n)
    return before


def num_threads():
    """The cores to use: set_num_threads(n)'s n, else $MINIGRAD_NUM_THREADS, else $OMP_NUM_THREADS,
    else the number of cores this process may use."""
    if _requested is not None:
        return _requested
    env = os.environ.get("MINIGRAD_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def threads():
    """Threads a parallel kernel runs on: num_threads() (at most numba's) where the
    team runs here (`has_team`), else 1. (The cores this process may use are looked up once.)"""
    global _threads_for
    if not has_team():
        return 1
    key = (_requested, _environ_get(_MINIGRAD_NUM_THREADS), _environ_get(_OMP_NUM_THREADS))
    if _threads_for[0] != key:
        _threads_for = (key, min(num_threads(), _numba.config.NUMBA_NUM_THREADS))
    return _threads_for[1]


def has_team():
    """Whether parallel kernels run on numba's threads here: its OpenMP or TBB threading layer loads
    (its fallback layer sleeps between jobs, and aborts when two threads of the process launch at
    once), and this is not a child forked after GNU OpenMP started (which cannot use it). Otherwise
    they run as plain loops, compiled without `parallel` (their sums may round differently)."""
    return available() and _threading_layer_ok()


def _threading_layer_ok():
    global _layer_ok, _launched
    if _layer_ok is None:
        with _lock:
            if _layer_ok is None:
                try:
                    # numba picks and starts its threading layer as a parallel function's load does
                    # (numba's _reload_parfors), with no kernel of its own to load and call
                    from numba.np.ufunc.parallel import _launch_threads

                    openmp = _openmp_thread_count()
                    _launch_threads()
                    _launched = True
                    _restore_openmp_thread_count(openmp)
                    _layer_ok = _numba.threading_layer() in ("omp", "tbb")
                except Exception:  # no threading layer loads: the kernels run as plain loops
                    _layer_ok = False
    return _layer_ok


def _openmp_thread_count():
    """(omp_set_num_threads, the calling thread's OpenMP thread count) of the OpenMP runtime in the
    process's global scope (PyTorch's GNU OpenMP, once PyTorch is imported), or None where there is none."""
    try:
        runtime = ctypes.CDLL(None)
        return runtime.omp_set_num_threads, runtime.omp_get_max_threads()
    except (OSError, AttributeError, TypeError):  # (no OpenMP loaded globally; TypeError: not a POSIX dlopen)
        return None


def _restore_openmp_thread_count(saved):
    # numba's OpenMP layer, starting, sets the OpenMP thread count to all the cores (omp_set_num_threads),
    # in the GNU OpenMP already loaded where there is one: PyTorch's, whose torch.set_num_threads(1) then
    # reads 2 or more. The team passes its own count to each launch, so the program's count can go back.
    if saved is not None:
        set_count, n = saved
        set_count(n)


def _team_size_for_this_thread(n):
    # numba's thread count is per calling thread; minigrad's may be below the cores
    if getattr(_team_tls, "n", None) != n:
        _numba.set_num_threads(n)
        _team_tls.n = n


# ---- a loaded machine ----------------------------------------------------------------------------
# A team thread that the OS does not run holds up every parallel region at its barrier: with another
# program busy on the cores, each team kernel waits out a scheduler delay (milliseconds), and a step
# takes several times longer than on one thread. The process's threads' time spent waiting for a CPU
# (Linux's schedstat) tells: while it is high, team kernels run on the calling thread alone. They
# still cut their work in threads() shares, so the results are the same bits either way.
ADAPT = True  # False: the team always runs on threads() threads
CHECK_SECONDS = 0.25  # how often the threads' waiting is read
WAIT_SHARE = 0.25  # waiting (summed over the threads) per second of wall time above which the cores are contended
RETRY_SECONDS = (2.0, 32.0)  # alone, the whole team is tried again after this long (doubled while it still waits)


class _Load:
    """Whether the team runs alone (on the calling thread), from readings of the threads' waiting."""

    def __init__(self):
        self.next_check = 0.0
        self.seen = None  # (monotonic time, waiting in ns) at the last reading
        self.alone = False
        self.trying = False  # the whole team is on trial for one reading
        self.retry_at = 0.0
        self.retry_after = RETRY_SECONDS[0]

    def team_size(self, n):
        """n, or 1 while the cores are contended."""
        if not ADAPT:
            return n
        now = time.monotonic()
        if now >= self.next_check:
            self.observe(now, _waiting_ns())
        return 1 if self.alone else n

    def observe(self, now, waited):
        self.next_check = now + CHECK_SECONDS
        if waited is None:  # no schedstat here: the team stays as it is
            self.next_check = float("inf")
            return
        if self.seen is not None and now > self.seen[0]:
            share = (waited - self.seen[1]) / 1e9 / (now - self.seen[0])
            if self.alone:
                if now >= self.retry_at:
                    self.alone, self.trying = False, True
            elif share > WAIT_SHARE:
                self.retry_after = min(2 * self.retry_after, RETRY_SECONDS[1]) if self.trying else RETRY_SECONDS[0]
                self.alone, self.trying, self.retry_at = True, False, now + self.retry_after
            else:
                self.trying = False
        self.seen = (now, waited)


_load = _Load()


def _waiting_ns():
    """Nanoseconds this process's threads have waited for a CPU, summed (Linux's
    /proc/self/task/*/schedstat); None where that is not readable."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    total, read = 0, False
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[1])
            read = True
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            continue
    return total if read else None


def _after_fork():
    global _layer_ok
    # GNU OpenMP cannot run in a child forked after it started (here, or in the user's own numba code)
    layer = sys.modules.get("numba.np.ufunc.parallel")
    if _launched or getattr(layer, "_is_initialized", False):
        _layer_ok = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


GRAIN = 256  # elementwise shares are cut at multiples of this many items: full vectors on both sides

# Elements from which a kernel's work goes to the team: below, starting the team costs more than a
# generated token's or a small layer's whole work.
TEAM_MIN_ELEMENTS = 1 << 16


@kernel
def share(n, p, parts, grain):  # part p of [0, n) in `parts`, cut at multiples of `grain` (the last ends at n)
    lo = n * p // parts // grain * grain
    hi = n if p == parts - 1 else n * (p + 1) // parts // grain * grain
    return lo, hi


def prepared_flat(a, dtype, shape):
    """`a` as the flat array a prepared step's compiled function (`kernel.entry`) was typed for: a numpy
    array of `dtype` (the same object) and `shape`, raveled (a view, or a copy in C order), writable and
    aligned (numba's types: a read-only array is another); else None (the usual call, which dispatches)."""
    if type(a) is not np.ndarray or a.dtype is not dtype or a.shape != shape:
        return None
    flat = a.ravel()
    flags = flat.flags
    return flat if flags.writeable and flags.aligned else None


def elementwise(plain, shared, out, *arrays):
    """Run an elementwise kernel over `out` and the same-sized `arrays` as flat arrays (scalars among
    them are passed as they are): `shared(out, *arrays, threads)` on the team for large work, else
    `plain(out, *arrays)` on this thread. Returns `out`."""
    flat = [out.ravel()]  # (ravel: a view of a C-contiguous array)
    for a in arrays:  # (a loop, not a comprehension: that is a call of its own, on every small op)
        if type(a) is np.ndarray:
            a = a.ravel()  # (a view, or a copy in C order)
        elif isinstance(a, np.ndarray):  # (a subclass: as a plain array)
            a = np.ascontiguousarray(a).reshape(-1)
        flat.append(a)
    if out.size >= TEAM_MIN_ELEMENTS and shared.on_team():
        shared(*flat, shared.threads())
    else:
        plain(*flat)
    return out


@kernel
def _gemm_product(C, A, B, address, ilp64):  # C = A B^T through `gemm`
    it = A.itemsize
    gemm(address, ilp64, 111, 112, C.shape[0], C.shape[1], A.shape[1], 1.0, A, A.strides[0] // it, B,
         B.strides[0] // it, 0.0, C, C.strides[0] // it)


def gemm_works(dtype, address, ilp64):
    """One small product with leading dimensions larger than the rows, against numpy's, before the
    symbol is trusted: the integer width is read from its name, which a build may not follow."""
    A = np.arange(21, dtype=dtype).reshape(3, 7)[:, 1:6]
    B = np.arange(20, dtype=dtype).reshape(4, 5)[:, ::-1].copy()
    C = np.full((3, 6), -7.0, dtype=dtype)
    _gemm_product(C[:, :4], A, B, address, ilp64)
    return bool(np.array_equal(C[:, :4], A @ B.T) and np.all(C[:, 4:] == -7.0))
