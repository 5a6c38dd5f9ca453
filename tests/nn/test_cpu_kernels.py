"""The CPU backend's plumbing (minigrad/backends/cpu): its kernels run by default when numba is
installed, the ops' own array code runs without them, and a numba that cannot write its disk cache
still compiles. The ops' results in both modes are tested with the ops (the `kernels` and
`blocking` fixtures run them with the backends on and off)."""
import math
import os

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from minigrad.backends.cpu import adamw, attention, blas, cross_entropy, embedding, gelu, layer_norm
from minigrad.backends.cpu import rnn as rnn_kernels
from minigrad.backends.cpu import team as cpu_kernels


def test_compiled_kernels_are_what_runs_when_numba_is_installed():
    # a missing numba or a kernel that never compiles would otherwise pass every test on the numpy
    # passes and show only in the benchmarks
    pytest.importorskip("numba")
    assert backends.find("gelu", np.zeros(2, np.float32), "none") is gelu
    # float64's erf, the tanh form and other dtypes: the op's own code
    assert backends.find("gelu", np.zeros(2), "none") is None and backends.find("gelu", np.zeros(2, np.float32), "tanh") is None
    assert backends.find("gelu", np.zeros(2, np.float16), "none") is None
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32), requires_grad=True)
    h = F.layer_norm(F.gelu(x), (8,)).view(2, 4, 2, 4).transpose(1, 2)
    y = F.scaled_dot_product_attention(h, h, h, is_causal=True)  # one compiled call per (batch, head)
    y = y + F.scaled_dot_product_attention(h, h, h, is_causal=True, dropout_p=0.5)  # the same, with dropout
    loss = y.sum() + F.cross_entropy(y.reshape(-1, 4), minigrad.tensor(np.arange(16) % 4))
    loss = loss + F.embedding(minigrad.tensor([0, 2, 2]), y.reshape(-1, 4)).sum()
    loss.backward()
    p = nn.Parameter(minigrad.ones(4))
    p.grad = minigrad.ones(4)
    nn.optim.AdamW([p]).step()
    for k in (gelu._forward, gelu._backward, layer_norm._rows, adamw._adam, layer_norm._rows_backward,
              attention._attention_items, attention._attention_items_backward, cross_entropy._cross_entropy_rows,
              embedding._scatter_add_rows):
        assert k._compiled is not None, k.__name__  # small inputs: the plain loops, on this thread
    with backends.kernels("numpy"):
        assert backends.find("gelu", np.zeros(2, np.float32), "none") is None


def test_without_numba_the_numpy_passes_run(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "_numba", False)  # as if `import numba` had failed
    assert not cpu_kernels.available() and backends.find("gelu", np.zeros(2, np.float32), "none") is None

    def never(*args):
        raise AssertionError("a compiled kernel ran without numba")

    monkeypatch.setattr(gelu, "_forward", never)
    monkeypatch.setattr(layer_norm, "_rows", never)
    monkeypatch.setattr(adamw, "_adam", never)
    x = minigrad.tensor(np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8), requires_grad=True)
    y = F.layer_norm(F.gelu(x), (8,))
    y.sum().backward()
    assert np.isfinite(x.grad.array).all()
    p = nn.Parameter(minigrad.ones(4))
    p.grad = minigrad.ones(4)
    nn.optim.AdamW([p], lr=0.1).step()
    assert (p.array < 1).all()


def test_a_numba_that_cannot_write_its_cache_still_compiles(monkeypatch):
    numba = pytest.importorskip("numba")
    real = numba.njit

    def njit(*args, **options):  # (numba's own modules call njit too, with a function)
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)

    @cpu_kernels.kernel
    def twice(out, x):
        for i in range(x.size):
            out[i] = 2.0 * x[i]

    x = np.arange(5.0)
    out = np.empty_like(x)
    twice(out, x)
    np.testing.assert_array_equal(out, 2 * x)


def test_gemm_from_a_kernel_matches_numpy():
    # OpenBLAS's gemm called from compiled code: both transposes, strided rows, alpha and beta, both dtypes
    pytest.importorskip("numba")
    if blas.gemm_address(np.float32) is None:
        pytest.skip("numpy is not built on OpenBLAS here")
    assert blas.gemm_address(np.int64) is None and blas.gemm_address(np.float16) is None

    @cpu_kernels.kernel
    def product(C, A, B, ta, tb, alpha, beta, address, ilp64):
        it = A.itemsize
        M, N = C.shape
        K = A.shape[0] if ta == 112 else A.shape[1]
        cpu_kernels.gemm(address, ilp64, ta, tb, M, N, K, alpha, A, A.strides[0] // it, B, B.strides[0] // it,
                         beta, C, C.strides[0] // it)

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        address, ilp64 = blas.gemm_address(dtype)
        for ta in (111, 112):
            for tb in (111, 112):
                a = rng.standard_normal((7, 12)).astype(dtype)[:, 2:7]  # (7, 5), rows 12 apart
                A = a.T if ta == 112 else a  # the kernel is given the array as stored; ta says how to read it
                M, K = A.shape
                b = rng.standard_normal((K, 9) if tb == 111 else (9, K)).astype(dtype)
                C0 = rng.standard_normal((M, 11)).astype(dtype)[:, :9]  # rows 11 apart
                C = C0.copy()
                product(C, a, b, ta, tb, dtype(0.5), dtype(2.0), address, ilp64)
                want = 0.5 * (A @ (b.T if tb == 112 else b)) + 2.0 * C0
                np.testing.assert_allclose(C, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_exp_nonpositive_accuracy_and_special_values():
    pytest.importorskip("numba")

    @cpu_kernels.kernel
    def exps(out, x):
        for i in range(x.size):
            out[i] = cpu_kernels.exp_nonpositive(x[i])

    x = np.concatenate([-np.linspace(0, 90, 200001), [-0.0, -1e-30, -86.9, -87.0, -87.1, -103.0, -np.inf, np.nan]])
    for dtype, tol in ((np.float32, 4e-7), (np.float64, 1e-15)):
        xs = x.astype(dtype)
        out = np.empty_like(xs)
        exps(out, xs)
        assert out.dtype == dtype
        ref = np.exp(xs.astype(np.float64))
        normal = (xs >= -87.0) if dtype == np.float32 else ~np.isnan(xs)  # float32: 0 below -87 (denormal range)
        rel = np.abs(out[normal].astype(np.float64) - ref[normal]) / np.where(ref[normal] > 0, ref[normal], 1)
        assert rel.max() < tol, (dtype, rel.max())
        if dtype == np.float32:
            assert np.all(out[xs < -87.0] == 0.0)
        assert out[-2] == 0.0 and np.isnan(out[-1]) and out[-8] == 1.0  # exp(-inf) = 0, NaN stays NaN, exp(-0) = 1


def test_tanh_accuracy_odd_symmetry_and_special_values():
    pytest.importorskip("numba")

    @cpu_kernels.kernel
    def tanhs(out, x):
        for i in range(x.size):
            out[i] = cpu_kernels.tanh(x[i])

    grid = np.concatenate([np.linspace(0, 12, 240001), np.geomspace(1e-30, 1e-3, 1000), [0.39999, 0.4, 0.40001]])
    x = np.concatenate([grid, -grid, [-0.0, 40.0, -40.0, 1e30, np.inf, -np.inf, np.nan]])
    for dtype, ulps in ((np.float32, 3), (np.float64, 1)):  # (float64: the C library's tanh)
        xs = x.astype(dtype)
        out = np.empty_like(xs)
        tanhs(out, xs)
        assert out.dtype == dtype
        ref = np.array([math.tanh(v) for v in xs.astype(np.float64).tolist()])
        finite = ~np.isnan(xs)
        err = np.abs(out[finite].astype(np.float64) - ref[finite]) / np.spacing(np.abs(ref[finite]).astype(dtype))
        assert err.max() <= ulps, (dtype, err.max())
        n = grid.size
        assert np.array_equal(out[n:2 * n], -out[:n])  # odd, bit for bit
        assert np.signbit(out[2 * n]) and out[2 * n] == 0  # tanh(-0) = -0
        assert list(out[2 * n + 1:2 * n + 6]) == [1, -1, 1, 1, -1] and np.isnan(out[-1])


def test_max_of_is_the_largest_value_and_keeps_a_positive_nan():
    pytest.importorskip("numba")

    @cpu_kernels.kernel
    def maxes(out, x, ns):
        for i in range(ns.size):
            out[i] = cpu_kernels.max_of(x, ns[i])

    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        tiny = np.finfo(dtype).smallest_subnormal
        cases = [rng.standard_normal(100) * 1e3, -np.abs(rng.standard_normal(100)) - 1,  # all negative
                 np.array([-0.0, 0.0, -0.0]), np.array([0.0, -0.0]), np.array([-np.inf, -1e30, np.inf, 3.0]),
                 np.array([-np.inf] * 5), np.array([-tiny, tiny, -2 * tiny]), np.array([-3.0, -tiny])]
        for x in cases:
            x = x.astype(dtype)
            ns = np.arange(1, x.size + 1)
            out = np.empty(x.size, dtype)
            maxes(out, x, ns)
            want = np.array([x[:n].max() for n in ns], dtype)
            assert out.dtype == dtype and np.array_equal(out, want), (dtype, x, out)
            top = [x[:n][x[:n] == w] for n, w in zip(ns, want)]  # zeros: +0 is above -0 (numpy's max takes either)
            assert np.array_equal(np.signbit(out), [np.signbit(t).all() for t in top])
        x = np.array([1.0, np.nan, 5.0, 2.0], dtype)  # numpy's NaN: sign bit clear
        out = np.empty(4, dtype)
        maxes(out, x, np.arange(1, 5))
        assert out[0] == 1.0 and np.isnan(out[1:]).all()
        x[1] = -x[1]  # a NaN with its sign bit set counts as the smallest value (documented)
        maxes(out, x, np.arange(1, 5))
        assert out[0] == 1.0 and out[1] == 1.0 and out[2] == 5.0 and out[3] == 5.0


@pytest.mark.parametrize("L", [64, 256])  # 256: causal rows cut into chunks, some columns never scored
def test_fused_attention_special_scores_match_the_numpy_passes(L):
    # a NaN, a +inf and a -inf among the scores (through q), each NaN sign: the same rows of NaN, the
    # same zeros after the causal edge, the same values elsewhere as the numpy passes
    pytest.importorskip("numba")
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 2, L, 16)).astype(np.float32) for _ in range(3))
    q[0, 0, 5, 3] = np.nan
    q[0, 1, 9, 0] = -np.float32(np.nan)
    q[1, 0, 40, 2] = np.inf
    q[1, 1, 33, :] = -np.inf  # scores +-inf: v's sign decides
    k[1, 1, 0, :] = 0.0  # a 0 * inf score: NaN
    for causal in (True, False):
        def run(causal):
            t = [minigrad.tensor(a) for a in (q, k, v)]
            return F.scaled_dot_product_attention(*t, is_causal=causal).array

        fused = run(causal)
        with backends.kernels("numpy"), np.errstate(invalid="ignore"):
            passes = run(causal)
        assert np.array_equal(np.isnan(fused), np.isnan(passes))
        assert np.isnan(fused[0, 0, 5]).all() and np.isnan(fused[0, 1, 9]).all()
        np.testing.assert_allclose(fused, passes, rtol=1e-5, atol=1e-6)


def test_fused_cross_entropy_special_logits_match_the_numpy_passes():
    # a NaN of each sign, a +inf and a -inf logit: NaN losses in those rows (finite where -inf), the
    # same values elsewhere, and the same gradients, as the numpy passes
    pytest.importorskip("numba")
    x = np.random.default_rng(3).standard_normal((6, 300)).astype(np.float32)
    x[1, 7], x[2, 100], x[3, 299], x[4, 0] = np.nan, -np.float32(np.nan), np.inf, -np.inf
    target = minigrad.tensor(np.array([0, 1, 2, 3, 4, 5]))

    def run():
        logits = minigrad.tensor(x, requires_grad=True)
        loss = F.cross_entropy(logits, target, reduction="none")
        loss.sum().backward()
        return loss.array, logits.grad.array

    fused = run()
    with backends.kernels("numpy"), np.errstate(invalid="ignore"):
        passes = run()
    assert np.isnan(fused[0][1:4]).all() and np.isfinite(fused[0][[0, 4, 5]]).all()
    for a, b in zip(fused, passes):
        assert np.array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


LAYERS = {"LSTM": ("LSTM", {}, "lstm_sequence"), "GRU": ("GRU", {}, "gru_sequence"),
          "RNN_TANH": ("RNN", {}, "rnn_sequence"), "RNN_RELU": ("RNN", {"nonlinearity": "relu"}, "rnn_sequence")}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", sorted(LAYERS))
def test_a_layers_steps_in_one_call_give_the_per_step_bits(monkeypatch, mode, dtype):
    # the whole sequence in one kernel (its products by gemm from inside the loop) must be what runs,
    # and give the bits of the loop that steps in Python (numpy's matmul, a kernel call per step): the
    # same products of the same operands, by one library, give the same bits (blas.gemm_found checks the
    # kernels' gemm against numpy's matmul on first use), however the BLAS cuts other products. Both
    # through numpy's OpenBLAS: two libraries need not agree (where MKL is installed and measured faster,
    # as on Intel machines, the kernels' gemm is MKL's)
    pytest.importorskip("numba")
    from minigrad.backends.cpu import blas_library

    monkeypatch.setenv("MINIGRAD_BLAS", "openblas")
    blas_library.forget()
    try:
        _steps_in_one_call(monkeypatch, mode, np.dtype(dtype))
    finally:
        monkeypatch.delenv("MINIGRAD_BLAS")
        blas_library.forget()


def _steps_in_one_call(monkeypatch, mode, dtype):
    if blas.gemm_library(dtype) != "openblas":
        pytest.skip("no OpenBLAS gemm for the kernels here")
    cls, opts, kernel = LAYERS[mode]

    def run():
        # 2 layers, both directions, batch first (the output's gradient is a strided view), h0 (and c0) given
        minigrad.manual_seed(0)
        layer = getattr(nn, cls)(16, 24, 2, bidirectional=True, batch_first=True, dtype=minigrad.float64
                                 if dtype == np.float64 else minigrad.float32, **opts)
        rng = np.random.default_rng(1)
        x, h0, c0 = (minigrad.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
                     for s in [(3, 7, 16), (4, 3, 24), (4, 3, 24)])
        out, state = layer(x, (h0, c0) if cls == "LSTM" else h0)
        h, c = state if cls == "LSTM" else (state, None)
        (out.sum() + (h * 2).sum() + (0 if c is None else (c * 3).sum())).backward()
        cs = [] if c is None else [c.array, c0.grad.array]
        return [out.array, h.array, x.grad.array, h0.grad.array, *cs] + [p.grad.array for p in layer.parameters()]

    calls = []
    real = getattr(rnn_kernels, kernel), getattr(rnn_kernels, kernel + "_backward")
    monkeypatch.setattr(rnn_kernels, kernel, lambda *a: calls.append("fwd") or real[0](*a))
    monkeypatch.setattr(rnn_kernels, kernel + "_backward", lambda *a: calls.append("bwd") or real[1](*a))
    fused = run()
    assert calls.count("fwd") == 4 and calls.count("bwd") == 4  # 2 layers x 2 directions
    monkeypatch.setattr(rnn_kernels, kernel, lambda *a: False)  # as without gemm: Python steps
    monkeypatch.setattr(rnn_kernels, kernel + "_backward", lambda *a: False)
    stepped = run()
    for a, b in zip(fused, stepped):
        assert a.dtype == dtype and np.array_equal(a, b)


def test_lstm_sequence_backward_takes_a_strided_output_gradient():
    # a batch_first LSTM's output gradient, and a lower layer's under a bidirectional one, are strided
    # views: the compiled loop reads them by index (before, it declined them and every step ran in Python)
    pytest.importorskip("numba")
    if blas.gemm_address(np.dtype(np.float32)) is None:
        pytest.skip("no BLAS gemm for the kernels here")
    rng = np.random.default_rng(0)
    T, B, H = 5, 3, 8
    gates, tanh_c, cells, da_shape = (rng.uniform(0.1, 0.9, (T, B, 4 * H)).astype(np.float32),
                                      *rng.uniform(-0.9, 0.9, (2, T, B, H)).astype(np.float32), (T, B, 4 * H))
    c0, w_hh = rng.standard_normal((B, H)).astype(np.float32), rng.standard_normal((4 * H, H)).astype(np.float32)
    g_out = rng.standard_normal((B, T, 2 * H)).astype(np.float32).transpose(1, 0, 2)[:, :, H:]
    results = []
    for g in (g_out, np.ascontiguousarray(g_out)):
        dh, dc, da = np.zeros((B, H), np.float32), np.zeros((B, H), np.float32), np.empty(da_shape, np.float32)
        assert rnn_kernels.lstm_sequence_backward(gates, tanh_c, cells, c0, g, dh, dc, da, w_hh, False)
        results.append((dh, dc, da))
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def test_a_gemm_that_fails_its_check_is_not_used(monkeypatch):
    # the symbol's integer width is read from its name; a product that does not match numpy's at first
    # use turns the fused attention off (the numpy passes run, with the same results)
    pytest.importorskip("numba")
    if blas.gemm_address(np.float32) is None:
        pytest.skip("numpy is not built on OpenBLAS here")
    address, ilp64 = blas.gemm_address(np.float32)
    assert cpu_kernels.gemm_works(np.float32, address, ilp64) and cpu_kernels.gemm_works(np.float64,
                                                                                         *blas.gemm_address(np.float64))
    x = minigrad.tensor(np.random.default_rng(1).standard_normal((2, 3, 16, 8)).astype(np.float32), requires_grad=True)
    want = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    assert want.grad_fn.impl is attention  # the fused path ran
    monkeypatch.setattr(blas, "_gemm_found_for", {})
    monkeypatch.setattr(cpu_kernels, "gemm_works", lambda *args: False)
    assert blas.gemm_address(np.float32) is None

    def never(*args):
        raise AssertionError("the fused attention ran with an untrusted gemm")

    monkeypatch.setattr(attention, "_attention_items", never)
    got = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    np.testing.assert_allclose(got.array, want.array, rtol=1e-5, atol=1e-6)


def test_tuning_asks_for_the_full_vector_width_unless_the_user_chose(monkeypatch):
    # LLVM prefers 256-bit vectors on AVX-512 CPUs; tune_process asks for 512, never over the user's setting
    pytest.importorskip("numba")
    import types

    from numba.core.codegen import get_host_cpu_features

    host = get_host_cpu_features()
    cpu_kernels.available()
    set_here = os.environ.get("NUMBA_CPU_FEATURES") == host + ",-prefer-256-bit"  # (by a tuning, not the user)
    fake = types.SimpleNamespace(config=types.SimpleNamespace(CPU_FEATURES=None))
    monkeypatch.setattr(cpu_kernels, "_numba", fake)
    monkeypatch.setenv("NUMBA_CPU_FEATURES", "+avx2")
    assert not cpu_kernels.full_vector_width()
    assert fake.config.CPU_FEATURES is None and os.environ["NUMBA_CPU_FEATURES"] == "+avx2"
    monkeypatch.delenv("NUMBA_CPU_FEATURES")
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    applied = cpu_kernels.full_vector_width()
    if "+avx512f" in host.split(","):
        assert applied and fake.config.CPU_FEATURES == os.environ["NUMBA_CPU_FEATURES"] == host + ",-prefer-256-bit"
    else:
        assert not applied and fake.config.CPU_FEATURES is None and "NUMBA_CPU_FEATURES" not in os.environ
    monkeypatch.undo()
    if set_here:
        x = np.linspace(-3, 3, 4096, dtype=np.float32)  # and a compiled kernel here does use 512-bit registers
        out = np.empty_like(x)
        import numba  # compiled afresh (code loaded from numba's disk cache cannot be inspected)

        k = numba.njit(**dict(cpu_kernels._OPTIONS, cache=False))(gelu._forward.py_func)
        k(out, x)
        assert "zmm" in k.inspect_asm(k.signatures[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_leaky_relu_loops_give_the_numpy_forms_and_pytorchs_bits(torch, dtype):
    # the backend's leaky_relu: forward x > 0 ? x : x slope, backward x > 0 ? g : g slope (NaNs, -0.0, infs
    # with PyTorch's bits, on and off the team, any slope); F.leaky_relu and leaky_relu_ run it, with
    # PyTorch's values and nodes, and the same results as the numpy forms
    pytest.importorskip("numba")
    from minigrad.backends.cpu import leaky_relu as leaky_kernels

    rng = np.random.default_rng(4)
    tiny = np.finfo(dtype).smallest_subnormal
    for n in (9, 3 * cpu_kernels.TEAM_MIN_ELEMENTS + 5):
        x = rng.standard_normal(n).astype(dtype)
        x[:8] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, tiny, -tiny]
        g = rng.standard_normal(n).astype(dtype)
        g[::5] = np.nan
        assert leaky_kernels.supports(x)
        for slope in (0.01, 0.2, 1.0, -0.5, 3.0):
            y = leaky_kernels.forward(x, slope)
            ty = torch.nn.functional.leaky_relu(torch.tensor(x), slope).numpy()
            assert y.dtype == dtype and np.array_equal(y.view(np.uint8), ty.view(np.uint8))
            gx = leaky_kernels.backward(g, x, slope)
            tg = torch.ops.aten.leaky_relu_backward(torch.tensor(g), torch.tensor(x), slope, False).numpy()
            assert np.array_equal(gx.view(np.uint8), tg.view(np.uint8))
            z = leaky_kernels.forward_(x.copy(), slope)
            assert np.array_equal(z.view(np.uint8), y.view(np.uint8))
    x = rng.standard_normal((4, 6, 9, 9)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    for slope, inplace, node in ((0.2, False, "LeakyReluBackward0"), (-0.5, False, "LeakyReluBackward0"),
                                 (0.2, True, "LeakyReluBackward1")):
        def run(fw, F, slope=slope, inplace=inplace):
            a = fw.tensor(x, requires_grad=True)
            y = F.leaky_relu(a * 1, slope, inplace=inplace)
            y.backward(fw.tensor(g))
            return y, a
        y, a = run(minigrad, F)
        ty, t = run(torch, torch.nn.functional)
        assert y.grad_fn.name() == ty.grad_fn.name() == node
        assert np.array_equal(y.detach().numpy(), ty.detach().numpy())
        assert np.array_equal(a.grad.numpy(), t.grad.numpy())
        with backends.kernels("numpy"):
            z, b = run(minigrad, F)
        assert np.array_equal(z.detach().numpy(), y.detach().numpy()) and np.array_equal(b.grad.numpy(),
                                                                                         a.grad.numpy())
    with minigrad.no_grad():  # nothing recorded: written into the array itself
        a = minigrad.tensor(x)
        F.leaky_relu_(a, 0.2)
    assert np.array_equal(a.numpy(), torch.nn.functional.leaky_relu(torch.tensor(x), 0.2).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_loops_give_the_numpy_forms_bits(torch, dtype):
    # the backend's relu: forward numpy's maximum(0, x) (NaNs and -0.0 kept with their bits), backward
    # where(r <= 0, 0, g) (a NaN r passes g); F.relu and minigrad.relu run it (on and off the team), with PyTorch's values
    pytest.importorskip("numba")
    from minigrad.backends.cpu import relu as relu_kernels

    rng = np.random.default_rng(3)
    tiny = np.finfo(dtype).smallest_subnormal
    for n in (9, 3 * cpu_kernels.TEAM_MIN_ELEMENTS + 5):
        x = rng.standard_normal(n).astype(dtype)
        x[:8] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, tiny, -tiny]
        g = rng.standard_normal(n).astype(dtype)
        g[::5] = np.nan
        assert relu_kernels.supports(x)
        y = relu_kernels.forward(x)
        assert y.dtype == dtype and np.array_equal(y.view(np.uint8), np.maximum(0, x).view(np.uint8))
        assert np.array_equal(y.view(np.uint8), torch.relu(torch.tensor(x)).numpy().view(np.uint8))
        gx = relu_kernels.backward(g, y)
        assert np.array_equal(gx.view(np.uint8), np.where(y <= 0, dtype(0), g).view(np.uint8))
    x = rng.standard_normal((4, 6, 9, 9)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    for fn, tfn in ((F.relu, torch.nn.functional.relu), (minigrad.relu, torch.relu)):
        a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = fn(a), tfn(t)
        y.backward(minigrad.tensor(g))
        ty.backward(torch.tensor(g))
        assert y.grad_fn.name() == ty.grad_fn.name() == "ReluBackward0"
        assert np.array_equal(y.array, ty.detach().numpy()) and np.array_equal(a.grad.array, t.grad.numpy())
        with backends.kernels("numpy"):
            b = minigrad.tensor(x, requires_grad=True)
            z = fn(b)
            z.backward(minigrad.tensor(g))
        assert np.array_equal(z.array, y.array) and np.array_equal(b.grad.array, a.grad.array)
