"""The BLAS the compiled kernels' products call (minigrad/backends/cpu/blas_library.py): the choice
(MINIGRAD_BLAS, the measured and cached one, the fallback without MKL), and products through every
library found here against numpy's, the same bits twice and on one thread or the team."""
import json
import os
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from minigrad.backends.cpu import blas, blas_library


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    """Each test decides anew, with its own cache directory; the process's choice is restored after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(blas_library.ENV, raising=False)
    blas_library.forget()
    yield
    monkeypatch.undo()
    blas_library.forget()


def openblas_or_skip():
    libs = blas_library.found()
    if "openblas" not in libs:
        pytest.skip("numpy is not built on OpenBLAS here")
    return libs["openblas"]


@pytest.fixture
def two_libraries(monkeypatch):
    """A second library beside OpenBLAS, to exercise the choice where MKL is not installed: OpenBLAS
    itself under the name "mkl" (a stand-in: the same symbols, so only the bookkeeping is tested)."""
    openblas_or_skip()
    stand_in = blas_library._load_openblas()
    stand_in.name, stand_in.version = "mkl", "stand-in 1.0"
    monkeypatch.setattr(blas_library, "_load_mkl", lambda: stand_in)
    blas_library.forget()
    return stand_in


def test_the_env_var_forces_a_library(monkeypatch, two_libraries):
    for name in ("openblas", "mkl"):
        monkeypatch.setenv("MINIGRAD_BLAS", name)
        blas_library.forget()
        assert blas_library.library().name == name
        address, ilp64, library = blas_library.gemm(np.float32)
        assert library == name and address == blas_library.found()[name].gemm[np.dtype(np.float32)][0]
    assert not os.path.exists(blas_library.cache_path())  # forced: nothing measured


def test_a_bad_env_value_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("MINIGRAD_BLAS", "atlas")
    with pytest.raises(ValueError, match="MINIGRAD_BLAS must be one of openblas, mkl or auto, got 'atlas'"):
        blas_library.library()


def test_without_mkl_openblas_serves_with_no_error(monkeypatch, tmp_path):
    openblas_or_skip()
    monkeypatch.setattr("sys.prefix", str(tmp_path / "no-mkl-here"))  # where the mkl wheel would put libmkl_rt
    blas_library.forget()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert set(blas_library.found()) == {"openblas"}
        assert blas_library.gemm(np.float32)[2] == "openblas"
    # asked for by name, a missing MKL says so once and OpenBLAS serves
    monkeypatch.setenv("MINIGRAD_BLAS", "mkl")
    with pytest.warns(RuntimeWarning, match="MINIGRAD_BLAS=mkl: that library is not installed here; using openblas"):
        assert blas_library.library().name == "openblas"


def test_the_choice_is_measured_once_and_cached(monkeypatch, two_libraries):
    calls = []
    real = blas_library.measure
    monkeypatch.setattr(blas_library, "measure", lambda libs: calls.append(1) or real(libs, repeats=1))
    name = blas_library.library().name
    assert calls == [1] and name in ("openblas", "mkl")
    data = json.loads(open(blas_library.cache_path()).read())
    entry = data[blas_library.cache_key(blas_library.found())]
    assert entry["library"] == name and set(entry["gflops_one_thread"]) == {"openblas", "mkl"}
    assert blas_library.cpu_model() in blas_library.cache_key(blas_library.found())
    # a later process reads it instead of measuring; the stand-in ties OpenBLAS, so OpenBLAS keeps it
    blas_library.forget()
    monkeypatch.setattr(blas_library, "_load_mkl", lambda: two_libraries)
    assert blas_library.library().name == name and calls == [1]


def test_the_cache_is_read_and_its_choice_kept(monkeypatch, two_libraries):
    path = blas_library.cache_path()
    os.makedirs(os.path.dirname(path))
    key = blas_library.cache_key(blas_library.found())
    with open(path, "w") as f:
        json.dump({key: {"library": "mkl"}, "another machine | openblas 0": {"library": "openblas"}}, f)
    monkeypatch.setattr(blas_library, "measure", lambda libs: pytest.fail("measured although cached"))
    assert blas_library.library().name == "mkl"
    # another version of a library is another key: measured again, the other entries kept
    monkeypatch.setattr(two_libraries, "version", "stand-in 2.0")
    monkeypatch.setattr(blas_library, "measure", lambda libs: {"openblas": 1.0, "mkl": 0.5})
    blas_library.forget()
    assert blas_library.library().name == "mkl"
    data = json.loads(open(path).read())
    assert len(data) == 3 and data[key]["library"] == "mkl"


@pytest.mark.parametrize("contents", ["{not json", "[1, 2]", '{"x": 1}', ""])
def test_a_corrupt_cache_is_measured_over_and_rewritten(monkeypatch, two_libraries, contents):
    path = blas_library.cache_path()
    os.makedirs(os.path.dirname(path))
    key = blas_library.cache_key(blas_library.found())
    with open(path, "w") as f:
        f.write(contents if contents != '{"x": 1}' else json.dumps({key: "mkl"}))  # last: a bad entry
    monkeypatch.setattr(blas_library, "measure", lambda libs: {"openblas": 1.0, "mkl": 1.01})  # a tie: OpenBLAS
    assert blas_library.library().name == "openblas"
    assert json.loads(open(path).read())[key]["library"] == "openblas"


def test_another_library_must_be_clearly_faster(monkeypatch, two_libraries):
    monkeypatch.setattr(blas_library, "measure", lambda libs: {"openblas": 1.0, "mkl": 0.9})
    assert blas_library.library().name == "mkl"


def test_an_unwritable_cache_still_chooses(monkeypatch, two_libraries, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where the directory would be
    monkeypatch.setattr(blas_library, "measure", lambda libs: {"openblas": 1.0, "mkl": 0.5})
    assert blas_library.library().name == "mkl"


# ---- products through every library found here ----------------------------------------------------
def libraries():
    return sorted(blas_library.found())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False)])
def test_each_librarys_gemm_agrees_with_numpy(dtype, ta, tb):
    rng = np.random.default_rng(0)
    M, N, K = 67, 130, 259
    for name in libraries():
        lib = blas_library.found()[name]
        A = rng.standard_normal((K, M) if ta else (M, K)).astype(dtype)
        B = rng.standard_normal((N, K) if tb else (K, N)).astype(dtype)
        expected = (A.T if ta else A).astype(np.float64) @ (B.T if tb else B).astype(np.float64)
        got = lib.matmul(A, B, ta, tb)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * np.sqrt(K), err_msg=name)


@pytest.fixture
def team():
    from minigrad.backends.cpu import team as cpu_kernels

    if not cpu_kernels.has_team():
        pytest.skip("no numba thread team here")
    return cpu_kernels


@pytest.mark.parametrize("name", libraries())
def test_linear_through_each_library_agrees_and_repeats_bit_for_bit(monkeypatch, team, name):
    import minigrad
    import nn.functional as F

    monkeypatch.setenv("MINIGRAD_BLAS", name)
    blas_library.forget()
    assert blas.gemm_library(np.float32) == name
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 96, 160), dtype=np.float32)
    w = rng.standard_normal((352, 160), dtype=np.float32) * 0.1
    g = rng.standard_normal((4, 96, 352), dtype=np.float32)

    def run(threads):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", str(threads))
        xt, wt = minigrad.tensor(x, requires_grad=True), minigrad.tensor(w, requires_grad=True)
        y = F.linear(xt, wt)
        y.backward(minigrad.tensor(g))
        return y.array.copy(), xt.grad.array.copy(), wt.grad.array.copy()

    first = run(2)
    ref = (x @ w.T, g @ w, g.reshape(-1, 352).T @ x.reshape(-1, 160))
    for got, want in zip(first, ref):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    for a, b in zip(first, run(2)):  # the same thread count and inputs: the same bits (what BLAS promises)
        assert a.tobytes() == b.tobytes()
    one = run(1)  # on one thread: the same bits again there, and close to the team's
    for a, b, c in zip(one, run(1), first):
        assert a.tobytes() == b.tobytes()
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", libraries())
def test_openblas_is_set_to_one_thread_around_the_teams_products_only_when_they_call_it(monkeypatch, team, name):
    """The team's threads each call gemm on a share: OpenBLAS's process-wide count must be 1 meanwhile
    (its own workers would fight them), set and restored around every product. MKL is loaded
    sequential, so its products leave OpenBLAS's setting alone (no two calls a product)."""
    import minigrad
    import nn.functional as F

    if blas.blas_thread_setter() is None:
        pytest.skip("no OpenBLAS thread setter here")
    monkeypatch.setenv("MINIGRAD_BLAS", name)
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    blas_library.forget()
    assert blas.gemm_library(np.float32) == name
    calls, real = [], blas_library._blas_setter
    monkeypatch.setattr(blas_library, "_blas_setter", lambda n: calls.append(n) or real(n))
    x = minigrad.tensor(np.ones((512, 512), np.float32), requires_grad=True)
    # (from OpenBLAS on 2 threads, a 2-core machine's default: at 1, as OMP_NUM_THREADS=1 leaves it, there is nothing to set)
    with threadpool_limits(2, user_api="blas"):
        y = F.linear(x, x)  # 2^27 multiply-adds: the team's products
        y.sum().backward()
    np.testing.assert_array_equal(y.array, np.full((512, 512), 512.0, np.float32))
    if name == "openblas":
        assert calls and calls[0] == 1 and len(calls) % 2 == 0  # to one thread and back, each product
        assert blas.team_gemm_context(np.float32) is blas.one_blas_thread()
    else:
        assert calls == []


def test_blas_threads_now_follows_every_setter():
    # the count is read where OpenBLAS keeps it: threadpoolctl's and minigrad's settings show at once
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if blas.blas_thread_setter() is None:
        pytest.skip("no OpenBLAS thread setter here")
    before = blas.blas_threads_now()
    try:
        for n in (3, 1, 2):
            with threadpoolctl.threadpool_limits(limits=n, user_api="blas"):
                assert blas.blas_threads_now() == n == blas_library._blas_getter()
                with blas.one_blas_thread():
                    assert blas.blas_threads_now() == 1
                assert blas.blas_threads_now() == n
            blas.blas_thread_setter()(n)
            assert blas.blas_threads_now() == n
    finally:
        blas.blas_thread_setter()(before)
