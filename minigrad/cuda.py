"""`minigrad.cuda`: the GPU, as `torch.cuda` presents it, over cupy.

    import minigrad.cuda
    minigrad.cuda.is_available()          # False (never raises) without cupy or a GPU
    minigrad.cuda.reset_peak_memory_stats()
    ... a training step ...
    minigrad.cuda.max_memory_allocated()  # bytes

cupy is imported only when a function here needs the GPU; without cupy or a GPU those functions
raise the device module's clear error (PyTorch's AssertionError "Torch not compiled with CUDA enabled"
where cupy is missing, a RuntimeError "device='cuda' was asked for, but ..." where it sees no GPU), except
`is_available()`, `device_count()` (0) and the TF32 setting (which works before cupy is loaded).

Memory is cupy's default memory pool, the allocator every minigrad CUDA array comes from:

* `memory_allocated()`: bytes of the pool's blocks in use by arrays (`pool.used_bytes()`; cupy
  rounds each allocation up to a multiple of 512 bytes, as PyTorch's allocator rounds too).
* `memory_reserved()`: bytes the pool holds from the driver, in use or cached (`total_bytes()`).
* `max_memory_allocated()`: the most bytes in use at once since `reset_peak_memory_stats()`.
  cupy's pool keeps no peak, so the reset installs a `cupy.cuda.MemoryHook` that adds up every
  pool malloc and free and keeps the maximum. That is exact (not sampled), but it costs a Python
  call per allocation and per free, so it is off until `reset_peak_memory_stats()` first asks for
  it (PyTorch tracks from the start, at no cost). cupy keeps hooks per thread: allocations made on
  other threads are not seen until the count is re-read from the pool, which `synchronize()`,
  `memory_allocated()` and `max_memory_allocated()` do. Before any reset, `max_memory_allocated()`
  is the bytes in use now. `stop_peak_tracking()` removes the hook (e.g. before timing steps).
* `empty_cache()`: hand the pool's cached (unused) blocks back to the driver.

TF32: cupy decides at a float32 matmul's first use whether cuBLAS may round its inputs to TF32,
reading the environment variable CUPY_TF32 ("1": yes, unset or "0": no), and keeps that answer
(`cupy._core._routines_linalg.get_compute_type`). `set_tf32(True/False)` sets CUPY_TF32 in this
process's environment (for a cupy not yet loaded) and, when cupy is loaded, sets its float32 and
complex64 compute type directly (COMPUTE_TYPE_TF32 or COMPUTE_TYPE_DEFAULT), so it takes effect
for the next matmul either way. Off by default (unless CUPY_TF32 is set when minigrad starts),
and the tests turn it off. It is PyTorch's `torch.backends.cuda.matmul.allow_tf32`.
"""
import contextlib
import importlib
import os
import sys
import threading

import numpy as np

from .amp import _device_amp
from .device import OutOfMemoryError, _import_cupy, cuda_is_available  # noqa: F401 (torch.cuda.OutOfMemoryError)

__all__ = [
    "amp", "is_available", "is_bf16_supported", "device_count", "set_device", "get_device_properties",
    "OutOfMemoryError", "current_device", "get_device_name", "synchronize", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats", "stop_peak_tracking", "empty_cache",
    "set_tf32", "get_tf32", "tf32", "manual_seed", "manual_seed_all", "seed", "seed_all",
]


# minigrad.cuda.amp: GradScaler and autocast for the GPU, as torch.cuda.amp (minigrad/amp.py); a
# GradScaler made without a GPU warns and disables itself
amp = _device_amp("cuda")


def _cp():
    """cupy, imported on first use; the device module's clear error without cupy or a GPU."""
    return _import_cupy()


# ---- devices -------------------------------------------------------------------------------------
def is_available():
    """True when cupy imports and sees a GPU. Never raises."""
    return cuda_is_available()


def is_initialized():
    """Whether CUDA has been set up in this process: cupy imported by a device='cuda' use (False without one,
    as PyTorch's answer before any CUDA call)."""
    import sys

    return "cupy" in sys.modules and is_available()


def device_count():
    """Number of CUDA GPUs cupy sees; 0 without cupy or a GPU."""
    if not is_available():
        return 0
    return int(_cp().cuda.runtime.getDeviceCount())


def is_bf16_supported(including_emulation=True):
    """False: minigrad has no bfloat16 arrays on any device (so scripts that pick bfloat16 when this is True,
    as nanoGPT does, pick float16 instead). PyTorch's answer is False too without a GPU."""
    return False


def _index(device):
    """A GPU's index from an int, 'cuda:1' or a device, as PyTorch's _get_device_index (None: the current one)."""
    if isinstance(device, int) or device is None:
        return device
    from .device import device as _device

    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index


def set_device(device):
    """Make GPU `device` the current one (a negative index does nothing, as in PyTorch). Without cupy, PyTorch's
    CPU build's AssertionError (its own raises an AttributeError from torch._C there)."""
    idx = _index(device)
    if idx is not None and idx >= 0:
        _cp().cuda.runtime.setDevice(idx)


class _DeviceProperties:
    """What `get_device_properties` tells: name, total_memory (bytes), major, minor, multi_processor_count."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.total_memory = int(props["totalGlobalMem"])
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.multi_processor_count = int(props["multiProcessorCount"])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """The properties of GPU `device` (the current one by default)."""
    cp = _cp()
    idx = _index(device)
    return _DeviceProperties(cp.cuda.runtime.getDeviceProperties(cp.cuda.runtime.getDevice() if idx is None else idx))


def current_device():
    """Index of the GPU cupy uses now."""
    return int(_cp().cuda.runtime.getDevice())


def get_device_name(device=None):
    """The GPU's name, e.g. 'NVIDIA H200'."""
    cp = _cp()
    idx = cp.cuda.runtime.getDevice() if device is None else int(getattr(device, "index", device) or 0)
    name = cp.cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize():
    """Wait until every kernel queued on the GPU has finished (for timing)."""
    _cp().cuda.Device().synchronize()
    _peak.resync()


# ---- memory --------------------------------------------------------------------------------------
def _pool():
    return _cp().get_default_memory_pool()


def memory_allocated(device=None):
    """Bytes of GPU memory held by arrays now (cupy's default pool, in-use blocks); 0 with no GPU."""
    if not is_available():  # (as PyTorch's, where CUDA was never started)
        return 0
    used = int(_pool().used_bytes())
    _peak.resync(used)
    return used


def memory_reserved(device=None):
    """Bytes cupy's default pool holds from the driver, in use or cached; 0 with no GPU."""
    if not is_available():
        return 0
    return int(_pool().total_bytes())


def max_memory_allocated(device=None):
    """The most bytes in use at once since `reset_peak_memory_stats()` (bytes in use now before any reset);
    0 with no GPU."""
    if not is_available():
        return 0
    used = int(_pool().used_bytes())
    _peak.resync(used)
    return max(used, _peak.peak) if _peak.active else used


def reset_peak_memory_stats(device=None):
    """Start (or restart) tracking the peak from the bytes in use now; see the module's notes."""
    _peak.start(_cp())


def stop_peak_tracking():
    """Remove the peak-tracking hook from this thread (its per-allocation cost goes away)."""
    _peak.stop()


def empty_cache():
    """Release the memory pool's unused cached blocks (and pinned host blocks) to the driver. (No GPU:
    nothing held, nothing done, as in PyTorch.)"""
    if not is_available():
        return
    cp = _cp()
    cp.get_default_memory_pool().free_all_blocks()
    with contextlib.suppress(Exception):
        cp.get_default_pinned_memory_pool().free_all_blocks()


class _PeakTracker:
    """Bytes in use (`now`) and the maximum (`peak`) of cupy's default pool, from a MemoryHook."""

    name = "minigrad.cuda.peak_memory"

    def __init__(self):
        self.active = False
        self.now = self.peak = 0
        self.hook = None
        self.threads = set()
        self.lock = threading.Lock()

    def _make_hook(self, cp):
        from cupy.cuda import memory_hook

        tracker = self

        class PeakHook(memory_hook.MemoryHook):
            name = tracker.name

            def malloc_postprocess(self, **kw):  # device_id, size, mem_size, mem_ptr, pmem_id
                if kw.get("mem_ptr", 1):
                    tracker.now += kw["mem_size"]
                    if tracker.now > tracker.peak:
                        tracker.peak = tracker.now

            def free_postprocess(self, **kw):  # device_id, mem_size, mem_ptr, pmem_id
                tracker.now -= kw["mem_size"]

        return PeakHook()

    def start(self, cp):
        with self.lock:
            if self.hook is None:
                self.hook = self._make_hook(cp)
            tid = threading.get_ident()
            if tid not in self.threads:
                self.hook.__enter__()  # registers the hook for this thread (cupy keeps hooks per thread)
                self.threads.add(tid)
            cp.cuda.Device().synchronize()
            self.now = self.peak = int(cp.get_default_memory_pool().used_bytes())
            self.active = True

    def stop(self):
        with self.lock:
            tid = threading.get_ident()
            if self.hook is not None and tid in self.threads:
                self.hook.__exit__(None, None, None)
                self.threads.discard(tid)
            self.active = bool(self.threads)

    def resync(self, used=None):
        """Re-read the bytes in use from the pool (frees seen by no hook: other threads, before the reset)."""
        if not self.active:
            return
        if used is None:
            used = int(_pool().used_bytes())
        self.now = used
        if used > self.peak:
            self.peak = used


_peak = _PeakTracker()


# ---- TF32 ----------------------------------------------------------------------------------------
_tf32 = int(os.environ.get("CUPY_TF32", "0") or 0) > 0


def set_tf32(enabled):
    """Let float32 matmuls use TF32 tensor cores (True) or keep full float32 (False, the default)."""
    global _tf32
    _tf32 = bool(enabled)
    os.environ["CUPY_TF32"] = "1" if _tf32 else "0"
    if "cupy" in sys.modules:  # loaded: its compute type may already be fixed, so set it directly
        _apply_tf32(sys.modules["cupy"], _tf32)


def get_tf32():
    """Whether float32 matmuls may use TF32 (what cupy will do, once it is loaded)."""
    if "cupy" in sys.modules:
        with contextlib.suppress(Exception):
            linalg = importlib.import_module("cupy._core._routines_linalg")
            return int(linalg.get_compute_type(np.float32)) == int(getattr(linalg, "COMPUTE_TYPE_TF32", 7))
    return _tf32


@contextlib.contextmanager
def tf32(enabled=True):
    """`with minigrad.cuda.tf32(True):` TF32 matmuls inside the block only."""
    before = get_tf32()
    set_tf32(enabled)
    try:
        yield
    finally:
        set_tf32(before)


def _apply_tf32(cp, enabled):
    try:
        linalg = importlib.import_module("cupy._core._routines_linalg")
    except ImportError:  # a cupy without the compute-type switch: CUPY_TF32 (set above) is all there is
        return
    kind = getattr(linalg, "COMPUTE_TYPE_TF32", 7) if enabled else getattr(linalg, "COMPUTE_TYPE_DEFAULT", 1)
    for dt in (np.float32, np.complex64):
        with contextlib.suppress(Exception):  # TF32 needs compute capability 8.0+; cupy warns and falls back
            linalg.set_compute_type(dt, kind)


# ---- random --------------------------------------------------------------------------------------
# (they work without a GPU, as PyTorch's do: the seed waits for the CUDA generator's first draw)
def manual_seed(seed):
    """Seed the CUDA generator only (`minigrad.manual_seed` seeds every generator)."""
    from . import random as _random

    _random.set_cuda_seed(seed)


def manual_seed_all(seed):
    """Seed the generator of every GPU: minigrad draws on one GPU per process, so as `manual_seed`."""
    manual_seed(seed)


def seed():
    """Seed the CUDA generator from the OS's entropy."""
    from . import random as _random

    _random.set_cuda_seed(_random._fresh_seed())


seed_all = seed
