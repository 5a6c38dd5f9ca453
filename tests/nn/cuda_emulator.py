"""Runs the CUDA kernels of minigrad/backends/cuda/kernels.py on the CPU, to test them without a GPU.

The kernels' CUDA source is compiled as C++ (g++) with a small emulation of what they use:
threadIdx / blockIdx / blockDim, __shared__ (a static: blocks run one after another),
__syncthreads (a barrier of the block's threads), __shfl_xor_sync (a per-warp exchange through
a buffer and a barrier) and the float intrinsics. Each CUDA thread of a block is an OS thread, so
block-wide reductions run as on a GPU, with the same order of operations.

`fake_cupy(lib)` is a stand-in for the cupy module, backed by numpy, whose RawKernel and
ElementwiseKernel run the compiled kernels: with it, the CUDA backend's wrappers run
unchanged on numpy arrays.
"""
import ctypes
import hashlib
import re
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np

PRELUDE = r"""
#include <math.h>
#include <string.h>
#include <barrier>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
struct dim3 { unsigned int x, y, z; };
static thread_local dim3 threadIdx;
static thread_local dim3 blockIdx;
static dim3 blockDim, gridDim;
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
struct MgWarp { std::barrier<>* bar; double buf[32]; };
static std::barrier<>* mg_block_bar;
static std::vector<MgWarp>* mg_warps;
static inline int mg_tid() { return threadIdx.x + threadIdx.y * blockDim.x; }
static inline void __syncthreads() { mg_block_bar->arrive_and_wait(); }
template <class V> static V __shfl_xor_sync(unsigned, V v, int o) {
    const int t = mg_tid();
    MgWarp& w = (*mg_warps)[t / 32];
    const int lane = t % 32;
    memcpy(&w.buf[lane], &v, sizeof(V));
    w.bar->arrive_and_wait();
    V r;
    memcpy(&r, &w.buf[lane ^ o], sizeof(V));
    w.bar->arrive_and_wait();
    return r;
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
static void mg_launch(unsigned gx, unsigned gy, unsigned bx, unsigned by, const std::function<void()>& body) {
    blockDim = {bx, by, 1};
    gridDim = {gx, gy, 1};
    const unsigned nt = bx * by;
    for (unsigned y = 0; y < gy; ++y)
        for (unsigned x = 0; x < gx; ++x) {
            std::barrier<> bb(nt);
            mg_block_bar = &bb;
            std::vector<MgWarp> warps((nt + 31) / 32);
            std::vector<std::unique_ptr<std::barrier<>>> bars;
            for (unsigned k = 0; k < warps.size(); ++k) {
                const unsigned size = (k + 1) * 32 <= nt ? 32 : nt - k * 32;
                bars.emplace_back(new std::barrier<>(size));
                warps[k].bar = bars.back().get();
            }
            mg_warps = &warps;
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < nt; ++t)
                ts.emplace_back([=, &body] { threadIdx = {t % bx, t / bx, 0}; blockIdx = {x, y, 0}; body(); });
            for (auto& t : ts) t.join();
        }
}
"""

SIGS = {}  # launcher tag -> [(is the parameter a pointer, its C type)]
_SIZES = {"long long": 8, "int": 4, "float": 4, "double": 8, "bool": 1}
_SIG = re.compile(r'extern "C" __global__ void (\w+)\((.*?)\)\s*\{', re.S)


def _params(src):
    name, plist = _SIG.search(src).groups()
    out = []
    for p in plist.split(","):
        p = " ".join(p.replace("__restrict__", "").split())
        typ, nm = p.rsplit(" ", 1)
        out.append((typ, nm))
    return name, out


def _unit(src, tag):
    """The kernel's source in its own namespace, and an extern "C" launcher `run_<tag>`."""
    name, params = _params(src)
    SIGS[tag] = [("*" in typ, typ.replace("const ", "").strip()) for typ, _ in params]
    ns = f"ns_{tag}"
    casts = []
    for i, (typ, _) in enumerate(params):
        t = re.sub(r"\bT\b", f"{ns}::T", typ)
        casts.append(f"({t})a[{i}]" if "*" in t else f"*({t.replace('const ', '')}*)a[{i}]")
    body = src.replace('extern "C" ', "")
    return (f"namespace {ns} {{\n{body}\n}}\n"
            f'extern "C" void run_{tag}(unsigned gx, unsigned gy, unsigned bx, unsigned by, void** a) {{\n'
            f"    mg_launch(gx, gy, bx, by, [=] {{ {ns}::{name}({', '.join(casts)}); }});\n}}\n")


def build(workdir):
    """Compile every kernel (float and double) into one shared library; returns the ctypes CDLL."""
    import sys

    root = Path(__file__).resolve().parents[2]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from bench.check_kernels import elementwise_source
    from minigrad.backends.cuda import kernels as ck

    parts = [PRELUDE]
    for name in ck.RAW:
        for dt in ("f", "d"):
            parts.append(_unit(ck.raw_source(name, dt), f"{name}_{dt}"))
    for name in ck.ELEMENTWISE:
        for dt, ct in (("f", "float"), ("d", "double")):
            parts.append(_unit(elementwise_source(name, ct), f"{name}_{dt}"))
    code = "\n".join(parts)
    workdir = Path(workdir)
    digest = hashlib.sha1(code.encode()).hexdigest()[:12]
    lib = workdir / f"cuda_emulator_{digest}.so"
    if not lib.exists():
        cpp = workdir / f"cuda_emulator_{digest}.cpp"
        cpp.write_text(code)
        subprocess.run(["g++", "-std=c++20", "-O1", "-fPIC", "-shared", "-pthread", "-w", str(cpp), "-o", str(lib)],
                       check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib))


def have_compiler():
    return shutil.which("g++") is not None


def _run(lib, tag, grid, block, args):
    fn = getattr(lib, f"run_{tag}")
    keep = []
    ptrs = (ctypes.c_void_p * max(1, len(args)))()
    is_ptr = SIGS[tag]
    assert len(args) == len(is_ptr), f"{tag}: {len(args)} arguments for {len(is_ptr)} parameters"
    for i, (a, (ptr, ctype)) in enumerate(zip(args, is_ptr)):
        if ptr:
            assert isinstance(a, np.ndarray) and a.flags.c_contiguous, f"{tag}: argument {i} is not a C-contiguous array"
            ptrs[i] = a.ctypes.data
            keep.append(a)
        else:  # a scalar, passed by value: point at a copy of it, of the exact numpy type given
            assert isinstance(a, np.generic), f"{tag}: scalar argument {i} is {type(a).__name__}, not a numpy scalar"
            want = (4 if tag.endswith("_f") else 8) if ctype == "T" else _SIZES[ctype]
            assert a.dtype.itemsize == want, f"{tag}: scalar argument {i} ({ctype}) given as {a.dtype} ({a.dtype.itemsize} bytes)"
            v = np.array(a)
            keep.append(v)
            ptrs[i] = v.ctypes.data
    g = tuple(grid) + (1,) * (2 - len(grid))
    b = tuple(block) + (1,) * (2 - len(block))
    fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
    fn(g[0], g[1], b[0], b[1], ptrs)


class RawKernel:
    def __init__(self, code, name, **_):
        self.name = name
        self.dt = "f" if "typedef float T;" in code else "d"

    def __call__(self, grid, block, args, shared_mem=0):
        _run(LIB[0], f"{self.name}_{self.dt}", grid, block, args)


class ElementwiseKernel:
    _types = {"float32": np.float32, "float64": np.float64, "bool": np.bool_}

    def __init__(self, in_params, out_params, operation, name, **_):
        self.name = name
        self.ins = [p.split() for p in in_params.split(",")]
        self.outs = [p.split() for p in out_params.split(",")]

    def __call__(self, *args):
        ins, outs = args[: len(self.ins)], list(args[len(self.ins):])
        T = None
        for (t, _), a in list(zip(self.outs, outs)) + list(zip(self.ins, ins)):
            if t == "T" and isinstance(a, np.ndarray) and a.ndim > 0:
                T = a.dtype
                break
        shape = np.broadcast_shapes(*[np.shape(a) for a in ins], *[a.shape for a in outs])
        n = int(np.prod(shape))
        flat = []
        for (t, _), a in zip(self.ins, ins):
            dt = T if t == "T" else self._types[t]
            flat.append(np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=dt), shape)))
        if not outs:
            outs = [np.empty(shape, dtype=T if t == "T" else self._types[t]) for t, _ in self.outs]
        for o in outs:
            assert o.flags.c_contiguous and o.shape == shape
        _run(LIB[0], f"{self.name}_{np.dtype(T).char}", (1,), (1,), flat + outs + [np.int64(n)])
        return outs[0] if len(outs) == 1 else tuple(outs)


LIB = [None]


def fake_cupy(lib):
    """A numpy-backed stand-in for the cupy module, whose kernels run on `lib`."""
    LIB[0] = lib
    m = types.ModuleType("fake_cupy")
    for name in ("empty", "empty_like", "zeros", "ones", "ascontiguousarray", "moveaxis", "matmul", "swapaxes",
                 "broadcast_to", "expand_dims", "where", "asarray", "argsort", "int64", "float32", "float64", "bool_",
                 "stack", "multiply"):
        setattr(m, name, getattr(np, name))
    m.ndarray = np.ndarray
    m.RawKernel = RawKernel
    m.ElementwiseKernel = ElementwiseKernel
    return m
