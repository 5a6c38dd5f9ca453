"""The compiled kernels' thread team (minigrad/backends/cpu/team.py: numba's OpenMP threads): where it
runs, that work shared over it gives the same bits as on one thread, that two threads of the user's may
use it at once, that a forked child falls back to plain loops, and that the matrix products cut in
shares and the fused attention with dropout agree with numpy's."""
import os
import sys
import subprocess
import threading
import types

import numpy as np
import pytest

import minigrad
import nn.functional as F
from minigrad import backends
from minigrad.backends.cpu import attention, blas
from minigrad.backends.cpu import linear as linear_module
from minigrad.backends.cpu import team as cpu_kernels
from nn._functional.linear import linear_arrays

numba = pytest.importorskip("numba")
RNG = np.random.default_rng(7)


def team_or_skip():
    if not cpu_kernels.has_team():
        pytest.skip("numba's OpenMP / TBB threading layer does not load here: the kernels run as plain loops")


def baby_step(threads, monkeypatch, dropout=0.0):
    """One training step of a small GPT: the loss, every gradient and the updated weights, as arrays."""
    from gpt.model import GPT, GPTConfig

    monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
    minigrad.manual_seed(0)
    model = GPT(GPTConfig(block_size=64, vocab_size=65, n_layer=2, n_head=4, n_embd=128, dropout=dropout, bias=False))
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    x = np.random.default_rng(1).integers(0, 65, size=(12, 65))
    _, loss = model(minigrad.tensor(x[:, :-1].copy()), minigrad.tensor(x[:, 1:].copy()))
    loss.backward()
    grads = [p.grad.array.copy() for p in model.parameters()]
    opt.step()
    return [loss.array.copy()] + grads + [p.array.copy() for p in model.parameters()]


def test_the_team_is_what_runs_where_numba_has_openmp(monkeypatch):
    team_or_skip()
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    assert cpu_kernels.threads() == min(2, numba.config.NUMBA_NUM_THREADS)
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "1")
    assert cpu_kernels.threads() == 1 and cpu_kernels.has_team()  # the team's code, on one thread
    with backends.kernels("numpy"):
        x = minigrad.tensor(RNG.standard_normal((64, 512)).astype(np.float32))
        F.gelu(x)  # the numpy passes: no kernel at all
    assert numba.threading_layer() in ("omp", "tbb")


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_a_gpt_step_is_the_same_bits_on_one_thread_and_on_the_team(monkeypatch, dropout):
    # attention's items, GELU, layer norm's per-chunk sums, cross-entropy and AdamW: each cut so that no
    # result depends on which thread computed it. The matrix products are BLAS's, which promises the
    # same bits for the same thread count only (OpenBLAS's Zen and Haswell kernels differ across
    # counts): here they all take numpy's matmul, at one thread count for both runs.
    team_or_skip()
    monkeypatch.setattr(linear_module, "supports", lambda *args: False)
    one, team = baby_step("1", monkeypatch, dropout), baby_step("2", monkeypatch, dropout)
    assert len(one) == len(team)
    for a, b in zip(one, team):
        assert np.array_equal(a, b)
    assert attention._attention_items._team_compiled is not None


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_gpt_step_repeats_bit_for_bit_at_a_thread_count(monkeypatch, threads):
    # products in shares included: the same inputs on the same thread count give the same bits
    team_or_skip()
    first, again = baby_step(threads, monkeypatch, 0.2), baby_step(threads, monkeypatch, 0.2)
    for a, b in zip(first, again):
        assert a.tobytes() == b.tobytes()
    if threads == "2":
        assert linear_module._products_kernel._team_compiled is not None


def test_a_gpt_step_on_one_thread_and_on_the_team_agree_to_rounding(monkeypatch):
    team_or_skip()
    one, team = baby_step("1", monkeypatch), baby_step("2", monkeypatch)
    np.testing.assert_allclose(one[0], team[0], rtol=1e-6)  # the loss
    for a, b in zip(one[1:], team[1:]):  # gradients and updated weights (Adam's first step: +-lr near 0)
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M,K,N", [(768, 128, 384), (300, 7, 3000), (2, 2048, 3000), (5, 300, 200), (1, 3, 2)])
def test_products_in_shares_match_numpy(monkeypatch, dtype, M, K, N):
    # cut along the result's longer side (rows, or columns when there are more of those), never the sum
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    x = minigrad.tensor(RNG.standard_normal((M, K)).astype(dtype), requires_grad=True)
    w = minigrad.tensor(RNG.standard_normal((N, K)).astype(dtype), requires_grad=True)
    g = RNG.standard_normal((M, N)).astype(dtype)
    y = F.linear(x, w)
    y.backward(minigrad.tensor(g))
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(y.array, x.array @ w.array.T, **tol)
    np.testing.assert_allclose(x.grad.array, g @ w.array, **tol)
    np.testing.assert_allclose(w.grad.array, g.T @ x.array, **tol)
    assert x.grad.array.dtype == dtype and w.grad.array.shape == (N, K)


@pytest.mark.parametrize("M,K,N", [(32, 128, 64), (20, 200, 800), (4, 768, 768), (2, 64, 700), (64, 64, 64),
                                   (33, 100, 100)])
def test_few_rows_in_small_path_blocks_match_numpy(monkeypatch, M, K, N):
    # on OpenBLAS's AVX-512 cores x W^T of a few rows runs in blocks that take its small-matrix path
    # (forced here, to test the blocks on any machine: each block is BLAS's own product of its part)
    monkeypatch.setattr(linear_module, "_small_path_blas", True)
    monkeypatch.setattr(linear_module, "_plans", {})
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "1")
    x = minigrad.tensor(RNG.standard_normal((M, K)).astype(np.float32), requires_grad=True)
    w = minigrad.tensor(RNG.standard_normal((N, K)).astype(np.float32), requires_grad=True)
    b = minigrad.tensor(RNG.standard_normal(N).astype(np.float32), requires_grad=True)
    out = np.empty((M, N), np.float32)
    if blas.gemm_library(np.float32) != "openblas":
        pytest.skip("the blocks call OpenBLAS's gemm")
    assert linear_module.supports(out, x.array, w.array)
    g = RNG.standard_normal((M, N)).astype(np.float32)
    y = F.linear(x, w, b)
    y.backward(minigrad.tensor(g))
    np.testing.assert_allclose(y.array, x.array @ w.array.T + b.array, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(x.grad.array, g @ w.array, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(w.grad.array, g.T @ x.array, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(F.linear(x, w, b).array, y.array)  # the same bits each time
    # the bias is added inside the blocks' kernel: bit for bit numpy's `+= b` on the product without it
    np.testing.assert_array_equal(y.array, F.linear(x, w).array + b.array)


def test_small_path_blocks_only_where_they_pay(monkeypatch):
    monkeypatch.setattr(linear_module, "_small_path_blas", True)
    monkeypatch.setattr(linear_module, "_plans", {})
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "1")
    f32 = np.float32

    def takes(M, K, N, dtype=f32):
        return linear_module.supports(np.empty((M, N), dtype), np.ones((M, K), dtype), np.ones((N, K), dtype))
    if blas.gemm_library(np.float32) != "openblas":
        pytest.skip("the blocks call OpenBLAS's gemm")
    assert takes(32, 128, 64) and takes(4, 768, 768) and takes(64, 64, 256)
    assert not takes(16, 128, 64)  # 1,024 entries: BLAS's small path takes the whole
    assert not takes(32, 16, 64)  # sums too short for the small path
    assert not takes(64, 32, 100)  # 64 rows with short sums: the packing path is faster
    assert not takes(128, 64, 64)  # many rows: packing W pays for itself
    assert takes(48, 5000, 128) and not takes(64, 5000, 128)  # long sums: blocks of 4 of W's rows pay, of 3 not
    assert not takes(32, 128, 64, np.float64)
    monkeypatch.setattr(linear_module, "_small_path_blas", False)  # a core without that path (Haswell, Zen 3)
    monkeypatch.setattr(linear_module, "_plans", {})
    assert not takes(32, 128, 64)


def test_products_of_strided_operands_take_numpy(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    xs = RNG.standard_normal((300, 2, 64)).astype(np.float32)[:, 0, :]  # rows 128 apart: not contiguous
    w = RNG.standard_normal((256, 64)).astype(np.float32)
    assert not linear_module.supports(np.empty((300, 256), np.float32), xs, w)
    np.testing.assert_allclose(linear_arrays(xs, w), xs @ w.T, rtol=1e-5, atol=1e-4)


def test_two_threads_of_the_user_may_use_the_team_at_once(monkeypatch):
    team_or_skip()
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    qkv = minigrad.tensor(RNG.standard_normal((12, 64, 384)).astype(np.float32), requires_grad=True)
    w = minigrad.tensor(RNG.standard_normal((512, 128)).astype(np.float32), requires_grad=True)

    def work():
        q, k, v = [a.view(12, 64, 4, 32).transpose(1, 2) for a in qkv.split(128, dim=2)]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(12, 64, 128)
        out = F.gelu(F.linear(F.layer_norm(y, (128,)), w))
        gq, gw = minigrad.autograd.grad(out.sum(), (qkv, w))
        return out.array.copy(), gq.array.copy(), gw.array.copy()

    want = work()
    results, errors = [], []

    def run():
        try:
            for _ in range(5):
                results.append(work())
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=run) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(results) == 10
    for got in results:
        assert all(np.array_equal(a, b) for a, b in zip(got, want))


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="fork is Linux-only here")
def test_a_forked_child_runs_the_kernels_as_plain_loops(monkeypatch):
    # GNU OpenMP cannot run in a child forked after it started (numba aborts such a child): plain loops
    team_or_skip()
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    x = minigrad.tensor(RNG.standard_normal((64, 1024)).astype(np.float32))
    w = minigrad.tensor(RNG.standard_normal((512, 1024)).astype(np.float32))
    want = F.layer_norm(F.gelu(F.linear(x, w)), (512,)).array
    r, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            ok = not cpu_kernels.has_team() and cpu_kernels.threads() == 1
            got = F.layer_norm(F.gelu(F.linear(x, w)), (512,)).array
            ok = ok and np.allclose(got, want, rtol=1e-5, atol=1e-5)
            os.write(wr, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(wr)
    os.waitpid(pid, 0)
    assert os.read(r, 10) == b"ok"
    assert cpu_kernels.has_team()  # the parent keeps its team


def test_without_the_team_the_plain_loops_give_the_same_values(monkeypatch):
    # numba's fallback threading layer (or a forked child): the kernels compiled without `parallel`
    team_or_skip()
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    on_team = baby_step("2", monkeypatch)
    monkeypatch.setattr(cpu_kernels, "_layer_ok", False)
    assert not cpu_kernels.has_team()
    plain = baby_step("2", monkeypatch)
    for a, b in zip(on_team, plain):  # (Adam's first step is +-lr where a gradient is near 0: atol)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("L", [64, 256])  # 256: P not kept, made again in backward
def test_fused_attention_with_dropout_matches_the_numpy_passes(L):
    H, E = 4, 16
    qkv = minigrad.tensor(RNG.standard_normal((3, L, 3 * H * E)).astype(np.float32), requires_grad=True)
    g = minigrad.tensor(RNG.standard_normal((3, H, L, E)).astype(np.float32))

    def run():
        qkv.grad = None
        q, k, v = [a.view(3, L, H, E).transpose(1, 2) for a in qkv.split(H * E, dim=2)]
        minigrad.manual_seed(3)  # the same dropout mask both times
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.3)
        mask = o.grad_fn._saved_mask.array.copy()
        o.backward(g)
        return o.array.copy(), qkv.grad.array.copy(), mask

    fused = run()
    with backends.kernels("numpy"):
        passes = run()
    assert np.array_equal(fused[2], passes[2]) and 0.6 < fused[2].mean() < 0.8  # the same mask, ~70% kept
    np.testing.assert_allclose(fused[0], passes[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused[1], passes[1], rtol=1e-4, atol=1e-5)


def test_a_users_blas_thread_count_survives_the_team(monkeypatch):
    # numpy's OpenBLAS has one process-wide thread count: the team sets it to 1 while its threads call
    # gemm, then back to what it was (nested and concurrent contexts: the last one out restores it)
    setter = blas.blas_thread_setter()
    if setter is None:
        pytest.skip("no OpenBLAS thread setter here")
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    before = blas.blas_threads_now()
    x = minigrad.tensor(RNG.standard_normal((512, 512)).astype(np.float32), requires_grad=True)
    try:
        for n in (1, 2):
            setter(n)
            F.linear(x, x).sum().backward()  # products on the team where it runs
            assert blas.blas_threads_now() == n
        with blas.one_blas_thread():
            with blas.one_blas_thread():
                assert blas.blas_threads_now() == 1
            assert blas.blas_threads_now() == 1
        assert blas.blas_threads_now() == 2
    finally:
        setter(before)


# ---- a loaded machine: the team runs alone while its threads wait for a CPU --------------------------
def test_a_team_run_alone_gives_the_same_bits(monkeypatch):
    # the kernels keep cutting their work in threads() shares (products included), so running them on
    # the calling thread alone changes which thread computes a share, never its bits
    team_or_skip()
    monkeypatch.setattr(cpu_kernels, "_load", cpu_kernels._Load())
    full = baby_step("2", monkeypatch, 0.2)
    cpu_kernels._load.alone, cpu_kernels._load.next_check = True, float("inf")  # as if the cores were busy
    alone = baby_step("2", monkeypatch, 0.2)
    assert cpu_kernels._load.team_size(2) == 1
    for a, b in zip(full, alone):
        assert a.tobytes() == b.tobytes()


def test_the_threads_waiting_moves_the_team_alone_and_back():
    load, share = cpu_kernels._Load(), cpu_kernels.WAIT_SHARE
    first, longest = cpu_kernels.RETRY_SECONDS
    waited = [0.0]

    def reading(t, waiting_per_second):  # the threads waited this much per second since the last reading
        waited[0] += waiting_per_second * 1e9 * (t - (load.seen[0] if load.seen else t))
        load.observe(t, waited[0])

    reading(0.0, 0)
    reading(0.25, share / 2)
    assert not load.alone  # a little waiting: the whole team
    reading(0.5, 4 * share)
    assert load.alone and load.retry_at == 0.5 + first
    reading(1.0, 4 * share)
    assert load.alone  # alone until the retry, whatever the readings
    reading(0.5 + first, 0)
    assert not load.alone and load.trying  # the whole team on trial
    reading(0.75 + first, 4 * share)  # still contended: alone again, for twice as long
    assert load.alone and load.retry_after == 2 * first
    t = 0.75 + first + 2 * first
    reading(t, 0)
    reading(t + 0.25, 0)  # the trial passed: the whole team stays
    assert not load.alone and not load.trying
    reading(t + 0.5, 4 * share)  # a new contention starts from the first wait again
    assert load.alone and load.retry_after == first
    for _ in range(10):  # the wait doubles up to the longest
        load.alone, load.trying = False, True
        reading(load.seen[0] + 0.25, 4 * share)
    assert load.retry_after == longest
    load.observe(100.0, None)  # no schedstat here: never read again
    assert load.next_check == float("inf")


def test_the_threads_waiting_is_read_from_linux():
    w = cpu_kernels._waiting_ns()
    if sys.platform.startswith("linux") and os.path.exists("/proc/self/task"):
        assert w is None or (isinstance(w, int) and w >= 0)
    else:
        assert w is None


def run_python(code):
    """Run `code` in a fresh interpreter from the repository's root; its stdout."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


# a training step through the kernels of a small model (embedding, linear, GELU, layer norm,
# cross_entropy, AdamW) on one thread; prints its loss, gradients and updated weights' bytes as hex
STEP = """
import hashlib, sys
import numpy as np
import minigrad, minigrad.nn as nn, minigrad.nn.functional as F
minigrad.set_num_threads(1)
minigrad.manual_seed(0)
model = nn.Sequential(nn.Embedding(27, 16), nn.Linear(16, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 27))
opt = minigrad.optim.AdamW(model.parameters(), lr=1e-2)
x = minigrad.tensor(np.random.default_rng(0).integers(0, 27, (8, 5)))
for _ in range(2):
    loss = F.cross_entropy(model(x).view(-1, 27), x.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
h = hashlib.sha256(loss.detach().numpy().tobytes())
for p in model.parameters():
    h.update(p.grad.numpy().tobytes())
    h.update(p.detach().numpy().tobytes())
print("step", h.hexdigest())
"""


def test_cached_kernels_load_without_numbas_registries_and_compute_the_same_bits():
    # numba refreshes its registries (every typing and lowering rule: most of a small script's first
    # step) before it loads a cached function; minigrad's kernels load without that, and are the same
    # machine code: a step gives the bits it gives after a full refresh
    run_python(STEP)  # (compiles whatever kernel the cache lacks)
    light = run_python(STEP + "from minigrad.backends.cpu import team\n"
                              "print('compiled', team._said_compiling, 'registries', 'numba.np.arraymath' in sys.modules)\n")
    if "compiled True" in light:
        pytest.skip("numba's disk cache keeps nothing here: every process compiles the kernels")
    assert "registries False" in light
    refreshed = run_python("from numba.core.registry import cpu_target\ncpu_target.target_context.refresh()\n" + STEP)
    assert light.split("\n")[0] == refreshed.split("\n")[0] and light.startswith("step ")


# attention (with dropout and without, on the team and on this thread) and max_pool2d's kernels, forward and backward
KERNELS_WITH_SCRATCH = """
import sys
import numpy as np
import minigrad, minigrad.nn.functional as F
minigrad.manual_seed(0)
for B, T, H, threads in ((2, 8, 9, 1), (8, 128, 96, 2)):  # (the second large enough for the team)
    minigrad.set_num_threads(threads)
    q = minigrad.randn(B, 2, T, 16, requires_grad=True)
    y = F.scaled_dot_product_attention(q, q, q, is_causal=True) + F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    y.sum().backward()
    x = minigrad.randn(2, 4, H, H, requires_grad=True)
    (F.max_pool2d(x, 3, 1) + F.max_pool2d(x, 3, 1, 1)[..., :H - 2, :H - 2]).sum().backward()
from minigrad.backends.cpu import team
print('compiled', team._said_compiling, 'arrayobj', 'numba.np.arrayobj' in sys.modules)
"""


def test_kernels_take_their_scratch_arrays_from_outside():
    # an array made inside a numba function has its cached code name numba's array module, which
    # loading it imports (~30 ms of a GPT's first step): the kernels that need room get it passed in
    run_python(KERNELS_WITH_SCRATCH)  # (compiles whatever kernel the cache lacks)
    out = run_python(KERNELS_WITH_SCRATCH)
    if "compiled True" in out:
        pytest.skip("numba's disk cache keeps nothing here: every process compiles the kernels")
    assert "arrayobj False" in out, out


def test_a_compile_after_a_light_load_has_numbas_registries_and_no_scipy_linalg():
    # numba's compiler loads the registries itself; minigrad has them import numba's numpy-function
    # module without scipy.linalg (a quarter second, imported only to set a flag it sets itself)
    code = STEP + (
        "import importlib.util, numba\n"
        "assert 'numba.np.arraymath' not in sys.modules\n"
        "f = numba.njit(lambda a: np.cumsum(a)[-1] + len({'x': 1}))  # needs numpy's and dict's rules\n"
        "assert f(np.arange(4.0)) == 7.0\n"
        "import numba.np.arraymath as am\n"
        "assert 'scipy.linalg' not in sys.modules, 'scipy.linalg imported'\n"
        "assert am._HAVE_BLAS == (importlib.util.find_spec('scipy') is not None)\n"
        "x = minigrad.randn(4, 5, requires_grad=True)\n"
        "F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3])).backward()  # kernels still run\n"
        "assert 'scipy.linalg' not in sys.modules\n"
        "print('ok')\n"
    )
    assert run_python(code).strip().endswith("ok")


def test_numba_starts_without_scipy_or_yaml_and_still_reads_its_yaml_config(tmp_path):
    # numba imports scipy only to check its version and yaml only for a .numba_config.yaml in the
    # working directory: the kernels' start leaves both unimported, and a config file written later
    # is still read (numba reads it again before each compile)
    code = (
        "import importlib.util, os, sys\n"
        "import numpy as np, minigrad, minigrad.nn.functional as F\n"
        "x = minigrad.randn(4, 5, requires_grad=True)\n"
        "F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3])).backward()\n"
        "from minigrad.backends.cpu import team\n"
        "assert team.started()\n"
        "print('imported', 'scipy' in sys.modules, 'yaml' in sys.modules)\n"
        "if importlib.util.find_spec('yaml'):\n"
        "    import numba\n"
        "    from numba.core import config\n"
        "    with open('.numba_config.yaml', 'w') as f:\n"
        "        f.write('opt: \"1\"\\n')\n"
        "    numba.njit(lambda a: a + 1)(1)\n"
        "    print('config', int(config.OPT))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(
                             os.path.abspath(__file__))))))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "imported False False" in out.stdout, out.stdout
    if "config" in out.stdout:
        assert "config 1" in out.stdout, out.stdout


def test_a_users_own_numba_functions_load_as_numba_loads_them():
    # only minigrad's kernels skip the refresh: numba's Cache class is left as it was, and a function
    # the user compiles gets numba's own cache object
    from numba.core.caching import Cache

    original = Cache.load_overload
    cpu_kernels.available()
    from minigrad.backends.cpu import array_memory

    array_memory._compile()  # (loads its cfuncs inside `loading_without_registries`)
    assert Cache.load_overload is original
    f = numba.njit(cache=True)(_users_function)
    assert f(1) == 2 and "load_overload" not in vars(f._cache)


def _users_function(a):  # (a module-level function: numba caches it on disk)
    return a + 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M,N", [(128, 205), (1, 7), (300, 300), (5, 1)])
def test_a_one_row_weight_gradient_is_numpys_outer_product_bit_for_bit(monkeypatch, dtype, M, N):
    # a product whose sum has one term (a batch of one row: g^T x) runs backends' "outer" loop: each entry
    # the one rounding of g_i x_j, as numpy's broadcast multiply makes it, NaN and infinities included
    from minigrad.backends.cpu import outer
    from minigrad.ops.matmul import matmul_arrays

    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    col, row = RNG.standard_normal((M, 1)).astype(dtype), RNG.standard_normal((1, N)).astype(dtype)
    col[0, 0], row[0, -1] = np.nan, -0.0
    if M > 2:
        col[2, 0] = np.inf
    with np.errstate(invalid="ignore"):
        want = np.multiply(col, row)
    assert backends.find("outer", col, row, None) is outer
    np.testing.assert_array_equal(matmul_arrays(col, row), want)
    out = np.full((M, N), 7.0, dtype)
    assert matmul_arrays(col, row, out=out) is out
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(matmul_arrays(col, row, out=np.zeros((N, M), dtype).T), want)  # a strided out: numpy
    assert not outer.supports(col, row.astype(np.float16 if dtype == np.float32 else np.float32), None)
    assert not outer.supports(col, row, np.empty((M, 2 * N), dtype)[:, ::2])
    # where it serves: Linear's weight gradient for a batch of one row
    x = minigrad.tensor(row, requires_grad=True)
    w = minigrad.tensor(RNG.standard_normal((M, N)).astype(dtype), requires_grad=True)
    F.linear(x, w).backward(minigrad.tensor(col.T.copy()))
    np.testing.assert_array_equal(w.grad.array, want)


def test_kernels_compile_without_numbas_internal_check_warnings():
    """numba's NumbaIRAssumptionWarning (its own pedantic check, asking for a report to numba) is not
    shown while a kernel compiles; every other warning still is."""
    import warnings

    from numba.core.errors import NumbaIRAssumptionWarning

    class Compiler:  # what the kernel wraps: numba's compiler, which a dispatcher calls on a miss in its caches
        def compile(self, *args):
            warnings.warn(NumbaIRAssumptionWarning("variable is not in scope"), stacklevel=2)
            warnings.warn("a user's warning", UserWarning, stacklevel=2)
            return args

    assert cpu_kernels.available()
    d = types.SimpleNamespace(_compiler=Compiler())
    cpu_kernels._compile_quietly(d)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert d._compiler.compile(1, 2) == (1, 2)
    assert [type(w.message) for w in seen] == [UserWarning]

    def twice(x):
        return 2 * x

    compiled = cpu_kernels.kernel(twice)._plain()  # a kernel's dispatcher compiles through the same wrapper
    assert compiled._compiler.compile.__name__ == "compile_quietly"
    assert compiled(np.float64(3.0)) == 6.0


def _thrice(x):
    return 3 * x


def test_a_kernels_first_call_loaded_from_the_disk_cache_keeps_the_warnings_shown():
    """A script's warning shows once per line (Python's "default" action) however many kernels the process
    meets for the first time after it: a kernel loaded from numba's disk cache changes no warning filter
    (leaving warnings.catch_warnings makes Python forget the warnings it has shown: a style-transfer
    script's grid_sample warning printed again at its second step, once the backward's kernels had loaded)."""
    import warnings

    assert cpu_kernels.available()
    first = cpu_kernels.kernel(_thrice)._plain()
    assert first(np.float64(2.0)) == 6.0  # compiled here, or loaded: numba's disk cache holds it from now on
    if first._cache_misses and not os.path.exists(first._cache._cache_file._index_path):
        pytest.skip("numba's cache is not writable here")
    registry = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        warnings.warn_explicit("shown once", UserWarning, "script.py", 7, registry=registry)
        again = cpu_kernels.kernel(_thrice)._plain()  # a new dispatcher: its first call loads from the disk
        assert again(np.float64(2.0)) == 6.0 and not again._cache_misses
        warnings.warn_explicit("shown once", UserWarning, "script.py", 7, registry=registry)
    assert [str(w.message) for w in seen] == ["shown once"]
