"""Keep freed array memory in the process for the next array, instead of returning it to the OS.

A training step allocates and frees the same few hundred array sizes every iteration. With
glibc's defaults, arrays above a dynamic threshold are fresh `mmap`s and the top of the heap
is trimmed back to the OS, so each new array pays page faults and the kernel zeroing its pages
again: measured here, a baby-GPT step spent a third of its time that way. Raising the mmap
threshold to its maximum (32 MiB) and the trim threshold lets glibc reuse the memory instead.
Set MINIGRAD_MALLOC_TUNING=0 (or glibc's own MALLOC_* variables) to keep the defaults.
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3


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
    ok = mallopt(M_MMAP_THRESHOLD, 32 << 20)
    ok &= mallopt(M_TRIM_THRESHOLD, 1 << 30)
    ok &= mallopt(M_TOP_PAD, 64 << 20)
    return bool(ok)


applied = tune_malloc()
