"""Compile every fused CUDA kernel of minigrad/backends/cuda/kernels.py with NVRTC, without a GPU.

    python bench/check_kernels.py [--arch compute_90] [--nvrtc /path/to/libnvrtc.so]   (or NVRTC_PATH=...)

cupy compiles the kernels with NVRTC on first use; this does the same ahead of time, so a typo
in the CUDA source shows up on any machine that has libnvrtc (the nvidia-cuda-nvrtc wheel,
cupy's CUDA libraries, or a CUDA toolkit), not first on the GPU. Raw kernels are compiled as cupy
compiles them (float and double); elementwise kernels are wrapped the way cupy's
ElementwiseKernel wraps them (inputs as const values, outputs as references). Prints one line
per kernel and exits 1 if any fails; exits 0 with a note when no libnvrtc is found.
"""
import argparse
import ctypes
import glob
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def find_nvrtc():
    """A loadable libnvrtc path, or None."""
    pats = [os.environ["NVRTC_PATH"]] if os.environ.get("NVRTC_PATH") else []
    for base in [os.environ.get("CUDA_PATH"), "/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"))]:
        if base:
            pats += [f"{base}/lib64/libnvrtc.so*", f"{base}/lib/libnvrtc.so*"]
    for p in sys.path:
        pats += [f"{p}/nvidia/*/lib/libnvrtc.so*", f"{p}/nvidia/cuda_nvrtc/lib/libnvrtc.so*"]
    for pat in pats:
        for path in sorted(glob.glob(pat)):
            if "alt" in os.path.basename(path) or "builtins" in os.path.basename(path):
                continue
            try:
                ctypes.CDLL(path)
                return path
            except OSError:
                continue
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            ctypes.CDLL(name)
            return name
        except OSError:
            continue
    return None


class NVRTC:
    def __init__(self, path):
        for b in sorted(glob.glob(os.path.join(os.path.dirname(path), "libnvrtc-builtins.so*"))):
            if ".alt." not in b:  # NVRTC opens its builtins library by name: load it first, from beside it
                ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
                break
        self.lib = lib = ctypes.CDLL(path)
        lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.nvrtcGetProgramLogSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        lib.nvrtcGetProgramLog.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

    def compile(self, source, name, options):
        """(ok, log)."""
        prog = ctypes.c_void_p()
        rc = self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), f"{name}.cu".encode(), 0, None, None)
        if rc:
            return False, f"nvrtcCreateProgram failed ({rc})"
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = self.lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        self.lib.nvrtcGetProgramLog(prog, buf)
        self.lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return rc == 0, buf.value.decode(errors="replace").strip()


def elementwise_source(name, ctype):
    """An elementwise kernel's body and preamble in a kernel shaped like cupy's ElementwiseKernel."""
    from minigrad.backends.cuda import kernels as ck

    in_p, out_p, body = ck.ELEMENTWISE[name]
    types = {"T": "T", "float32": "float", "float64": "double", "bool": "bool"}
    params, decls = [], []
    for kind, plist in (("in", in_p), ("out", out_p)):
        for p in plist.split(","):
            t, nm = p.split()
            c = types[t]
            params.append(f"{'const ' if kind == 'in' else ''}{c}* _p_{nm}")
            decls.append(f"{'const ' if kind == 'in' else ''}{c}{' &' if kind == 'out' else ''} {nm} = _p_{nm}[_i];")
    return (f"typedef {ctype} T;\n{ck.MATH}\n"
            f'extern "C" __global__ void {name}({", ".join(params)}, const long long _n) {{\n'
            f"  for (long long _i = blockIdx.x * (long long)blockDim.x + threadIdx.x; _i < _n;"
            f" _i += (long long)blockDim.x * gridDim.x) {{\n    " + "\n    ".join(decls) + f"\n{body}\n  }}\n}}\n")


def sources():
    """[(label, source, kernel name)] of every kernel, float and double."""
    from minigrad.backends.cuda import kernels as ck

    out = []
    for name in ck.RAW:
        for dt in ("float32", "float64"):
            out.append((f"raw {name} {dt}", ck.raw_source(name, dt), name))
    for name in ck.ELEMENTWISE:
        for ct in ("float", "double"):
            out.append((f"elementwise {name} {ct}", elementwise_source(name, ct), name))
    return out


def check(arch="compute_90", path=None):
    """{label: (ok, log)} for every kernel, or None when no libnvrtc is found."""
    path = path or find_nvrtc()
    if path is None:
        return None
    nv = NVRTC(path)
    return {label: nv.compile(src, name, [f"--gpu-architecture={arch}"]) for label, src, name in sources()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="compute_90")
    ap.add_argument("--nvrtc", help="path of libnvrtc.so (default: search)")
    args = ap.parse_args()
    path = args.nvrtc or find_nvrtc()
    if path is None:
        print("no libnvrtc found: nothing compiled (pip install nvidia-cuda-nvrtc, or use a CUDA toolkit)")
        return 0
    results = check(args.arch, path)
    bad = 0
    for label, (ok, log) in results.items():
        print(f"{'ok  ' if ok else 'FAIL'} {label}" + (f"\n{log}" if log else ""))
        bad += not ok
    print(f"{len(results) - bad} of {len(results)} kernels compile with {path} for {args.arch}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
