"""Keep freed array memory in the process for the next array, instead of returning it to the OS.

A training step allocates and frees the same few hundred array sizes every iteration. With
glibc's defaults, large arrays are fresh `mmap`s and the top of the heap is trimmed back to the
OS, so each new array pays page faults and the kernel zeroing its pages again. Measured here: a
baby-GPT step spent a third of its time that way, and a shakespeare_char step 3 s of kernel time
in 10 s. Serving every array from the heap (no mmap) and never trimming it lets glibc hand the
same memory back out instead: the process keeps its peak footprint, which a training run
reaches every step anyway. Set MINIGRAD_MALLOC_TUNING=0 (or glibc's own MALLOC_* variables)
to keep glibc's defaults; MINIGRAD_MALLOC_TUNING=0 also keeps numpy's own array allocator, which
the CPU backend otherwise replaces with one that aligns arrays to cache lines
(minigrad/backends/cpu/array_memory.py).
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -2, -3, -4


def tune_malloc():
    """Apply the tuning once, on Linux with glibc; a no-op elsewhere. Returns whether it applied."""
    if not sys.platform.startswith("linux") or os.environ.get("MINIGRAD_MALLOC_TUNING", "1") == "0":
        return False
    if any(k.startswith("MALLOC_") for k in os.environ):  # the user tuned glibc already
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc
        return False
    ok = mallopt(M_MMAP_MAX, 0)  # no mmap: large arrays come from the heap too, and are reused
    # never give the heap's top back to the OS: -1 is SIZE_MAX once glibc takes it as a size_t. A
    # 2 GiB threshold (the largest positive int) was not enough: a shakespeare_char step frees more
    # than that at once, and re-faulting it cost 0.7 s of a 7.8 s step.
    ok &= mallopt(M_TRIM_THRESHOLD, -1)
    ok &= mallopt(M_TOP_PAD, 64 << 20)  # grow the heap in large steps
    return bool(ok)


applied = tune_malloc()
