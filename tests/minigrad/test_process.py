"""`import minigrad` and its ops leave the process alone; `tune_process()` tunes it, and undoes that
(minigrad/backends/process.py). Each case runs in a fresh process: these are process state."""
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc, /proc's RSS")

PRELUDE = """
import os
import numpy as np

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def rss_returns():  # a 400 MB array freed: does the process give the memory back?
    before = rss_mib()
    a = np.ones(100 << 20, np.float32)
    peak = rss_mib()
    del a
    return peak - before > 300 and rss_mib() - before < 50

handler = np._core.multiarray.get_handler_name
"""

EVERY_FUSED_OP = """
import minigrad, nn, gpt  # noqa: F401
import nn.functional as F
minigrad.manual_seed(0)
def leaf(*shape):
    return minigrad.randn(*shape, requires_grad=True)
x, w, b = leaf(64, 512), leaf(256, 512), leaf(256)
q, k, v = leaf(2, 4, 64, 32), leaf(2, 4, 64, 32), leaf(2, 4, 64, 32)
ids = minigrad.randint(0, 256, (64,))
table = leaf(256, 512)
img, kernel = leaf(2, 3, 16, 16), leaf(4, 3, 3, 3)
losses = [
    F.linear(x, w, b), F.linear(x, w), F.embedding(ids, table), F.layer_norm(x, (512,), leaf(512), leaf(512)),
    F.gelu(x), F.gelu(x, approximate="tanh"), F.relu(x), F.sigmoid(x), F.batch_norm(x, None, None, training=True), F.softmax(x, -1), F.log_softmax(x, -1),
    F.dropout(x, 0.3), F.cross_entropy(F.linear(x, w), ids),
    F.scaled_dot_product_attention(q, k, v, is_causal=True), F.scaled_dot_product_attention(q, k, v, dropout_p=0.1),
    F.conv2d(img, kernel),
]
sum(l.sum() for l in losses).backward()
params = [x, w, b, q, table, kernel]
opt = nn.optim.AdamW(params, lr=1e-3)
opt.step()
"""


def python(*pieces, **env):
    """What the code `pieces` (each dedented) print in a fresh process (the repository's minigrad), split
    into words."""
    code = "\n".join(textwrap.dedent(p) for p in pieces)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "MINIGRAD_MALLOC", "GLIBC_TUNABLES"))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**full, "PYTHONPATH": str(ROOT), **env}, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_import_and_every_fused_op_leave_the_process_alone():
    out = python(PRELUDE, """
        import threadpoolctl  # (it sets KMP_DUPLICATE_LIB_OK on import: the environment is read after it)
        def blas_threads():
            return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()
                    if i["user_api"] == "blas"}
        environ, blas, name = dict(os.environ), blas_threads(), handler()
        print(rss_returns())  # the check itself works here
        """, EVERY_FUSED_OP, """
        print(dict(os.environ) == environ, handler() == name == "default_allocator")
        now = blas_threads()
        print(all(now[path] == n for path, n in blas.items()))
        print(rss_returns())
    """)
    assert out == ["True"] * 5


@pytest.mark.parametrize("kernels", ["fast", "numpy", "reference"])
def test_the_same_on_every_kernel_setting(kernels):
    out = python(PRELUDE, """
        environ = dict(os.environ)
        """, EVERY_FUSED_OP, """
        print(dict(os.environ) == environ, handler(), rss_returns())
    """, MINIGRAD_KERNELS=kernels)
    assert out == ["True", "default_allocator", "True"]


def test_tune_process_keeps_freed_memory_and_undo_sets_it_back():
    pytest.importorskip("numba")
    out = python(PRELUDE, """
        import minigrad
        tuning = minigrad.backends.tune_process()
        print(",".join(sorted(tuning.applied)))
        print(handler(), rss_returns())
        tuning.undo()
        print(handler(), rss_returns(), len(tuning.applied))
    """)
    assert {"malloc", "allocator"} <= set(out[0].split(","))
    assert out[1:] == ["minigrad_aligned_64", "False", "default_allocator", "True", "0"]


def test_undo_restores_numpys_handler_and_a_tuning_can_be_made_again():
    pytest.importorskip("numba")
    out = python("""
        import numpy as np
        import minigrad
        handler = np._core.multiarray.get_handler_name
        with minigrad.backends.tune_process() as tuning:
            print(handler(), "allocator" in tuning.applied)
            kept = np.ones(1 << 16)  # made by minigrad's allocator, freed by it after the undo
        print(handler(), kept.ctypes.data % 64)
        del kept
        with minigrad.backends.tune_process():  # again: the same allocator
            print(handler(), np.ones(1 << 16).ctypes.data % 64)
        print(handler())
    """)
    assert out == ["minigrad_aligned_64", "True", "default_allocator", "0", "minigrad_aligned_64", "0",
                   "default_allocator"]


def test_tuning_is_off_with_minigrad_malloc_tuning_0():
    out = python(PRELUDE, """
        import minigrad
        print(len(minigrad.backends.tune_process().applied & {"malloc", "allocator"}), handler(), rss_returns())
    """, MINIGRAD_MALLOC_TUNING="0")
    assert out == ["0", "default_allocator", "True"]


@pytest.mark.parametrize("env", [{"MALLOC_TOP_PAD_": "1048576"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1048576"},
                                 {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F:glibc.malloc.top_pad=1048576"}])
def test_malloc_left_alone_where_the_user_tuned_glibc(env):
    pytest.importorskip("numba")
    out = python(PRELUDE, """
        import minigrad
        print("malloc" in minigrad.backends.tune_process().applied)
    """, **env)
    assert out == ["False"]


GLIBC_HEAP = """
import ctypes, platform, resource
libc = ctypes.CDLL("libc.so.6")
libc.sbrk.restype = ctypes.c_void_p

def on_heap(nbytes):  # from glibc's heap (below its break), not pages of its own (mmap)
    a = np.empty(nbytes, np.uint8)
    return a.ctypes.data < libc.sbrk(0)

def faults_a_step():  # a step making and freeing two (120, 1000) float32 arrays: a small vocabulary's logits
    x = np.ones((120, 1000), np.float32)
    for _ in range(3):
        y = x * 2; z = y + 1; del y, z
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        y = x * 2; z = y + 1; del y, z
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
"""


@pytest.mark.skipif(not platform.libc_ver()[0] == "glibc", reason="glibc's adaptive mmap threshold")
def test_import_lets_glibc_keep_arrays_under_a_mebibyte_on_its_heap_and_larger_ones_go_back():
    # `import torch` leaves glibc's threshold at ~0.93 MiB; minigrad's import frees one 960 KiB block so that
    # a step's mid-size arrays come from the heap, with no page faults, as in a PyTorch process
    out = python(PRELUDE, GLIBC_HEAP, """
        import minigrad  # noqa: F401
        print(faults_a_step() < 5, on_heap(900 << 10))  # (each probe frees its array: faults first)
        print(rss_returns(), on_heap(4 << 20))  # larger arrays: pages of their own, back at free
    """)
    assert out == ["True", "True", "True", "False"]
    # without it (MINIGRAD_MALLOC_TUNING=0: minigrad leaves malloc alone), glibc maps each of them afresh
    out = python(PRELUDE, GLIBC_HEAP, """
        import minigrad  # noqa: F401
        print(faults_a_step() > 100, on_heap(900 << 10))
    """, MINIGRAD_MALLOC_TUNING="0")
    assert out == ["True", "False"]


def test_set_num_threads_sets_the_team_and_blas():
    pytest.importorskip("threadpoolctl")
    out = python("""
        import os
        import minigrad
        import threadpoolctl
        from minigrad.backends.cpu import blas
        minigrad.set_num_threads(1)
        print(minigrad.get_num_threads(), blas.blas_threads_now())
        minigrad.set_num_threads(2)
        print(minigrad.get_num_threads(), blas.blas_threads_now())
        for bad in (0, 1.5):
            try:
                minigrad.set_num_threads(bad)
            except RuntimeError as e:
                print(str(e).replace(" ", "_"))
    """)
    assert out == ["1", "1", "2", "2", "set_num_threads_expects_a_positive_integer",
                   "set_num_threads_expects_an_int,_but_got_float"]


def test_the_teams_start_leaves_pytorchs_openmp_thread_count_alone():
    # numba's OpenMP layer sets the OpenMP thread count to all the cores as it starts, in the GNU OpenMP
    # PyTorch loaded: a program that runs both (a comparison, a benchmark) had torch.set_num_threads(1) undone
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: the count numba sets is 1 too")
    out = python("""
        import torch
        torch.set_num_threads(1)
        torch.ones(4, 4) @ torch.ones(4, 4)
        assert torch.get_num_threads() == 1  # (PyTorch's OpenMP set up before minigrad's team starts)
        """, EVERY_FUSED_OP, """
        from minigrad.backends.cpu import team
        print(team.has_team(), torch.get_num_threads())
    """, MINIGRAD_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if out[0] != "True":
        pytest.skip("no OpenMP or TBB threading layer for numba here")
    assert out[1] == "1"


def test_omp_num_threads_is_the_default():
    assert python("import minigrad; print(minigrad.get_num_threads())", OMP_NUM_THREADS="1",
                  MINIGRAD_NUM_THREADS="") == ["1"]


def test_train_py_tunes_its_process(tmp_path):
    pytest.importorskip("numba")
    sys.path.insert(0, str(ROOT / "tests" / "gpt"))
    try:
        from cli_runner import tiny
    finally:
        sys.path.pop(0)
    args = tiny(tmp_path, max_iters=1, eval_interval=1, eval_iters=1)
    out = python(f"""
        import runpy, sys
        import numpy as np
        sys.argv = ["train.py", *{args!r}]
        try:
            runpy.run_path("train.py", run_name="__main__")
        except SystemExit as e:
            assert not e.code, e.code
        print("HANDLER", np._core.multiarray.get_handler_name())
    """)
    assert out[-2:] == ["HANDLER", "minigrad_aligned_64"]
