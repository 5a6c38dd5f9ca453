"""The malloc tuning (tune_process(), minigrad/backends/process.py): arrays come from the heap, and freed memory stays there
for the next array instead of going back to the OS (to be faulted in and zeroed again)."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import ctypes
    import numpy as np
    import minigrad
    applied = "malloc" in minigrad.backends.tune_process().applied

    class MallInfo2(ctypes.Structure):  # glibc >= 2.33
        _fields_ = [(f, ctypes.c_size_t) for f in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    x = np.ones((64 << 20) // 4, np.float32)  # 64 MiB: above glibc's default mmap threshold
    mmapped = libc.mallinfo2().hblkhd
    heap = libc.mallinfo2().arena
    del x
    print(applied, mmapped, heap, libc.mallinfo2().arena)
""")


def _run(tuning):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(MINIGRAD_MALLOC_TUNING=tuning, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"no glibc mallinfo2 here: {out.stderr.strip().splitlines()[-1]}")
    applied, mmapped, heap, heap_after_free = out.stdout.split()
    return applied == "True", int(mmapped), int(heap), int(heap_after_free)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_large_arrays_come_from_the_heap_and_stay_there_after_free():
    applied, mmapped, heap, heap_after_free = _run("1")
    if not applied:
        pytest.skip("not glibc")
    assert mmapped < (64 << 20)  # the array was not a fresh mmap
    assert heap >= (64 << 20)
    assert heap_after_free == heap  # freeing it trimmed nothing


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_tuning_can_be_turned_off():
    applied, mmapped, heap, heap_after_free = _run("0")
    assert not applied
    assert mmapped >= (64 << 20)  # glibc's default: a large array is its own mmap, unmapped on free
