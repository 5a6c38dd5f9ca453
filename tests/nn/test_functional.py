"""nn.functional: gradcheck (float64) of every op, agreement with PyTorch (float32 and float64),
node names, dtype preservation, errors, and the fused ops against their composite definitions."""
import math

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck
from minigrad import backends
from minigrad.backends.cpu import attention as cpu_attention
from minigrad.backends.cpu import team
from nn._functional import reference as R
from minigrad.ops.special_array import erf

F64 = minigrad.float64
RNG = np.random.default_rng(0)
pytestmark = pytest.mark.usefixtures("own_rng")


def rand(*shape, dtype=np.float64, grad=True, scale=1.0):
    return minigrad.tensor((RNG.standard_normal(shape) * scale).astype(dtype), requires_grad=grad)


def ids(high, shape):
    return minigrad.tensor(RNG.integers(0, high, shape))


@pytest.fixture(params=["blocks", "default", "numpy passes"])
def blocking(request, monkeypatch):
    """Run three times: with tiny blocks (many blocks, spread over threads), with the default size,
    and without the backends (MINIGRAD_KERNELS=numpy: the ops' own array code)."""
    if request.param == "numpy passes":
        monkeypatch.setattr(backends, "_kernels", "numpy")
    if request.param == "blocks":
        import nn._functional._common as common
        import minigrad.ops.special_array as erf_module

        monkeypatch.setattr(common, "BLOCK", 4096)
        monkeypatch.setattr(erf_module, "BLOCK", 4096)
    return request.param


def T(torch, t, grad=None):
    """A torch copy of a minigrad tensor (a leaf requiring grad when the original does)."""
    out = torch.tensor(np.array(t.array))
    if (t.requires_grad if grad is None else grad) and out.is_floating_point():
        out.requires_grad_(True)
    return out


def close(a, b, dtype):
    a = a.array if isinstance(a, minigrad.Tensor) else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    if dtype == np.float32:  # (a float32 sum's error scales with its terms: the largest result stands for them)
        np.testing.assert_allclose(a, b, atol=1e-5 * max(1.0, float(np.abs(b).max(initial=0.0))), rtol=1e-4)
    else:
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=1e-9)


def compare(torch, ours, theirs, args, dtype, seed_grad=True):
    """Forward and input gradients of `ours(*args)` vs `theirs(*torch args)` for a random upstream gradient."""
    targs = [T(torch, a) if isinstance(a, minigrad.Tensor) else a for a in args]
    y, ty = ours(*args), theirs(*targs)
    assert y.dtype == minigrad.tensor(np.zeros(1, dtype)).dtype
    close(y, ty, dtype)
    g = RNG.standard_normal(y.shape).astype(dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    for a, ta in zip(args, targs):
        if isinstance(a, minigrad.Tensor) and a.requires_grad:
            assert a.grad.dtype == a.dtype
            close(a.grad, ta.grad, dtype)


# ---- erf ---------------------------------------------------------------------------------------
def test_erf_float64_matches_math_erf():
    x = np.concatenate([np.linspace(-9, 9, 40001), np.logspace(-300, 1.3, 2000), -np.logspace(-300, 1.3, 2000),
                        [0.0, -0.0, 0.46875, 4.0, 6.0, 27.0, 1e300]])
    ref = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(erf(x) - ref)) < 1e-15
    assert np.max(np.abs(erf(x) - ref) / np.maximum(np.abs(ref), 1e-300)) < 1e-15


def test_erf_special_values_and_float32():
    r = erf(np.array([np.inf, -np.inf, np.nan, 0.0]))
    assert r[0] == 1 and r[1] == -1 and np.isnan(r[2]) and r[3] == 0
    x = np.linspace(-7, 7, 300001).astype(np.float32)  # several blocks
    r = erf(x)
    assert r.dtype == np.float32
    ref = np.array([math.erf(float(v)) for v in x[::7]])
    assert np.max(np.abs(r[::7] - ref)) < 5e-7
    out = x.copy()
    assert erf(out, out=out) is out and np.array_equal(out, r)


# ---- linear ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(shape, bias):
    x, w = rand(*shape), rand(5, 4)
    b = rand(5) if bias else None
    assert gradcheck(lambda x, w, b: F.linear(x, w, b), (x, w, b))
    names = ("ViewBackward0", "SqueezeBackward4") if len(shape) == 1 else ("AddmmBackward0", "MmBackward0")  # (torch's)
    assert F.linear(x, w, b).grad_fn.name() == names[0 if bias else 1]
    assert F.linear(x, w, b).shape == shape[:-1] + (5,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_vs_torch(torch, dtype):
    x, w, b = rand(4, 7, 16, dtype=dtype), rand(24, 16, dtype=dtype), rand(24, dtype=dtype)
    compare(torch, F.linear, torch.nn.functional.linear, (x, w, b), dtype)
    x, w = rand(9, 16, dtype=dtype), rand(3, 16, dtype=dtype)
    compare(torch, F.linear, torch.nn.functional.linear, (x, w), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_of_inner_size_one_give_blass_bits(dtype):
    # an inner size of 1 (the weight gradient of one row, a Linear(1, n)'s product, an outer product
    # by `@`) is taken as the elementwise product, not handed to BLAS: each entry must still be BLAS's
    # one rounding of a_i b_j, forward and backward
    from minigrad.ops.matmul import matmul_arrays

    for xs, ws in (((1, 37), (23, 37)), ((50, 1), (16, 1))):
        x, w, b = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype), rand(ws[0], dtype=dtype)
        g = RNG.standard_normal((xs[0], ws[0])).astype(dtype)
        y = F.linear(x, w, b)
        y.backward(minigrad.tensor(g))
        xa, wa = x.array, w.array
        assert np.array_equal(y.detach().numpy(), np.matmul(xa, wa.T) + b.array)
        assert np.array_equal(x.grad.numpy(), np.matmul(g, wa))
        assert np.array_equal(w.grad.numpy(), np.matmul(g.T, xa))
        assert np.array_equal(b.grad.numpy(), g.sum(axis=0))
    u, v = rand(7, 1, dtype=dtype), rand(1, 5, dtype=dtype)
    (u @ v).backward(minigrad.tensor(np.ones((7, 5), dtype)))
    assert np.array_equal((u @ v).detach().numpy(), np.matmul(u.array, v.array))
    assert np.array_equal(v.grad.numpy(), np.matmul(u.array.T, np.ones((7, 5), dtype)))
    out = np.empty((7, 5), dtype)
    assert matmul_arrays(u.array, v.array, out=out) is out and np.array_equal(out, np.matmul(u.array, v.array))

@pytest.mark.parametrize("rows", [4, 32, 64])
def test_matmul_by_a_transposed_weight_is_linears_product(torch, rows):
    # x @ W.T, and the gradient g @ W.T of a product h @ W, are nn.Linear's product x W^T: in PyTorch the same
    # bits as F.linear(x, W); minigrad runs them through the linear backend too (few rows: OpenBLAS's
    # small-matrix blocks, not numpy's packing path at 1.5-3x the time)
    f32 = dict(dtype=np.float32, grad=False)
    x, w, g = rand(rows, 256, **f32), rand(200, 256, **f32), rand(rows, 256, **f32)
    y = x @ w.T
    assert np.array_equal(y.numpy(), F.linear(x, w).numpy())
    assert y.grad_fn is None and y.dtype == minigrad.float32 and y.shape == (rows, 200)
    assert (x @ rand(200, 256, dtype=np.float32).T).grad_fn.name() == "MmBackward0"
    h = rand(rows, 200, dtype=np.float32)
    (h @ w).backward(g)
    assert np.array_equal(h.grad.numpy(), F.linear(g, w).numpy()) and h.grad.array.flags.c_contiguous
    tx, tw, tg = (torch.tensor(t.numpy()) for t in (x, w, g))
    assert torch.equal(tx @ tw.T, torch.nn.functional.linear(tx, tw))  # (the reference's own rule)
    np.testing.assert_allclose(y.numpy(), (tx @ tw.T).numpy(), rtol=1e-5, atol=1e-4)
    th = torch.tensor(h.detach().numpy(), requires_grad=True)
    (th @ tw).backward(tg)
    np.testing.assert_allclose(h.grad.numpy(), th.grad.numpy(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("xs, ws, dtype", [((32, 28), (128, 28), np.float32), ((3, 5), (4, 5), np.float64),
                                            ((1, 9), (6, 9), np.float32)])
def test_matmul_by_a_transposed_weight_the_backend_declines_is_numpys_product(xs, ws, dtype):
    # where the linear backend declines (few multiply-adds, short sums), `x @ W.T` is numpy's own product:
    # the same bits, dtype and C-contiguous result, forward and in the gradient g @ W.T
    x, w, g = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype), RNG.standard_normal((xs[0], ws[0])).astype(dtype)
    y = x @ w.T
    want = np.matmul(x.array, w.array.T)
    assert y.dtype == x.dtype and y.array.flags.c_contiguous and np.array_equal(y.detach().numpy(), want)
    assert y.grad_fn.name() == "MmBackward0"
    h = rand(xs[0], ws[0], dtype=dtype)
    (h @ w).backward(minigrad.tensor(x.array.copy()))
    assert np.array_equal(h.grad.numpy(), np.matmul(x.array, w.array.T))
    y.backward(minigrad.tensor(g))
    assert np.array_equal(x.grad.numpy(), np.matmul(g, w.array))


def test_linear_saves_only_inputs_and_shape_error():
    x, w = rand(3, 4), rand(5, 4)
    y = F.linear(x.detach(), w)
    assert y.grad_fn.saved_nbytes() == x.nbytes  # input only: weight is not needed for gW
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(rand(3, 5), w)


# ---- embedding ---------------------------------------------------------------------------------
@pytest.mark.parametrize("V", [7, 300])  # compiled: one loop; numpy: one-hot GEMM path and sort/reduceat path
def test_embedding_gradcheck_repeated_indices(kernels, V):
    w = rand(V, 3)
    idx = minigrad.tensor([[1, 2, 1], [0, V - 1, 1], [2, 2, 2]])
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    assert F.embedding(idx, w).grad_fn.name() == "EmbeddingBackward0"
    distinct = minigrad.tensor([4, 0, 5, 3])
    assert gradcheck(lambda w: F.embedding(distinct, w), (w,))


@pytest.mark.parametrize("V", [65, 500])
def test_embedding_vs_torch(torch, kernels, V):
    w = rand(V, 8, dtype=np.float32)
    idx = ids(V, (6, 33))
    compare(torch, lambda w: F.embedding(idx, w), lambda w: torch.nn.functional.embedding(T(torch, idx), w), (w,),
            np.float32)
    w = rand(V, 8, dtype=np.float32)
    compare(torch, lambda w: F.embedding(idx, w, padding_idx=3),
            lambda w: torch.nn.functional.embedding(T(torch, idx), w, padding_idx=3), (w,), np.float32)


@pytest.mark.parametrize("n", [5, 200])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatter_add_rows_every_path(kernels, n, dtype):
    # the embedding gradient: rows added at their ids, repeats summed, untouched rows zero; an
    # int32 index array and a non-contiguous gradient as well
    from nn._functional.linear import scatter_add_rows

    g = RNG.standard_normal((300, 6)).astype(dtype)
    for idx in (RNG.integers(0, n, 150), np.arange(150) % n, RNG.permutation(n)[: min(n, 150)].astype(np.int32)):
        rows = g[: 2 * idx.size : 2]  # every other row: a strided view
        want = np.zeros((n, 6))
        np.add.at(want, idx, rows.astype(np.float64))
        got = scatter_add_rows(idx, rows, n)
        assert got.shape == (n, 6) and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_embedding_of_no_ids(kernels):
    w = rand(5, 3, dtype=np.float32)
    y = F.embedding(minigrad.tensor(np.zeros((2, 0), dtype=np.int64)), w)
    assert y.shape == (2, 0, 3)
    y.sum().backward()
    assert w.grad.shape == (5, 3) and not w.grad.array.any()


def test_embedding_padding_row_gets_no_gradient_and_errors():
    w = rand(6, 3)
    F.embedding(minigrad.tensor([0, 1, 0, 2]), w, padding_idx=0).sum().backward()
    assert np.all(w.grad.array[0] == 0) and np.all(w.grad.array[1] == 1)
    with pytest.raises(IndexError, match=r"id 6 is not in \[0, 6\)"):
        F.embedding(minigrad.tensor([1, 6]), w)
    with pytest.raises(RuntimeError, match="indices"):
        F.embedding(minigrad.tensor([1.0]), w)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])  # (PyTorch's two index types; others refused)
def test_embedding_id_checks_every_id_dtype(dtype):
    # the ids are checked in one pass as unsigned: a negative id, the last one, the first out of range
    w = rand(6, 3)
    assert F.embedding(minigrad.tensor(np.array([0, 5, 5], dtype=dtype)), w).shape == (3, 3)
    assert F.embedding(minigrad.tensor(np.array([[5]], dtype=dtype)), w).shape == (1, 1, 3)  # one id, as generating
    cases = [([1, 6, 2], 6), ([0, 100], 100), ([[6]], 6), ([100], 100)]
    if np.issubdtype(dtype, np.signedinteger):
        cases += [([1, -1], -1), ([-7, 9], -7), ([[-1]], -1)]
    for bad, named in cases:
        with pytest.raises(IndexError, match=rf"id {named} is not in \[0, 6\)"):
            F.embedding(minigrad.tensor(np.array(bad).astype(dtype)), w)


# ---- layer_norm --------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("shape,norm", [((3, 5), (5,)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 4))])
def test_layer_norm_gradcheck(kernels, affine, shape, norm):
    x = rand(*shape)
    w = rand(*norm) if affine != "none" else None
    b = rand(*norm) if affine == "both" else None
    assert gradcheck(lambda x, w, b: F.layer_norm(x, norm, w, b), (x, w, b))
    assert F.layer_norm(x, norm, w, b).grad_fn.name() == "NativeLayerNormBackward0"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_vs_torch(torch, blocking, dtype):
    # 300 rows of 384: several row blocks
    x, w, b = rand(3, 100, 384, dtype=dtype, scale=3.0), rand(384, dtype=dtype), rand(384, dtype=dtype)
    compare(torch, lambda x, w, b: F.layer_norm(x, (384,), w, b, 1e-5),
            lambda x, w, b: torch.nn.functional.layer_norm(x, (384,), w, b, 1e-5), (x, w, b), dtype)
    x = rand(4, 6, 5, dtype=dtype)
    compare(torch, lambda x: F.layer_norm(x, (6, 5), eps=1e-3),
            lambda x: torch.nn.functional.layer_norm(x, (6, 5), eps=1e-3), (x,), dtype)


def test_layer_norm_saves_input_mean_rstd_weight_and_errors():
    x, w, b = rand(4, 8, dtype=np.float32), rand(8, dtype=np.float32), rand(8, dtype=np.float32)
    node = F.layer_norm(x, (8,), w, b).grad_fn
    assert node.saved_nbytes() == 4 * 8 * 4 + 2 * 4 * 4 + 8 * 4  # input, mean and 1/std per row, weight
    assert node._saved_input.array is x.array and node._saved_weight.array is w.array
    np.testing.assert_allclose(node._saved_mean.array[:, 0], x.array.mean(axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(node._saved_rstd.array[:, 0], 1 / np.sqrt(x.array.var(axis=1) + 1e-5), rtol=1e-5)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(x, (4,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prepared_layer_norm_forward_is_the_backends_forward(dtype):
    """A replay without backward runs the CPU layer norm prepared once for its rows (its scalars and
    stand-ins made at capture): the same bits as `forward`, one row or enough for the team, with and
    without weight and bias."""
    if not team.available():
        pytest.skip("the CPU kernels need numba")
    from minigrad.backends.cpu import layer_norm as cpu_layer_norm

    D = 96
    w, b = RNG.standard_normal(D).astype(dtype), RNG.standard_normal(D).astype(dtype)
    for N in (1, 7, 2 * team.TEAM_MIN_ELEMENTS // D):
        x = RNG.standard_normal((N, D)).astype(dtype)
        for wb in ((w, b), (w, None), (None, None)):
            want = [np.empty((N, D), dtype), np.empty((N, 1), dtype), np.empty((N, 1), dtype)]
            got = [np.full_like(a, np.nan) for a in want]
            cpu_layer_norm.forward(*want, x, *wb, 1e-5)
            cpu_layer_norm.prepared_forward(np.dtype(dtype), 1e-5, D)(*got, x, *wb)
            assert all(np.array_equal(g, a) for g, a in zip(got, want)), (N, [v is None for v in wb])


def test_layer_norm_parameter_gradients_are_the_same_bits_on_any_thread_count(monkeypatch):
    # rows in 3 blocks of 341 (D = 768): two threads cut the range mid-block; each block's column sums
    # must still be its own (no two threads adding into one), summed in block order
    D = 768
    x = rand(3 * 341, D, dtype=np.float32)
    w, b = rand(D, dtype=np.float32), rand(D, dtype=np.float32)
    g = minigrad.tensor(RNG.standard_normal((3 * 341, D)).astype(np.float32))
    seen = {}
    for threads in ("1", "2", "2", "2", "2", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        w.grad = b.grad = x.grad = None
        F.layer_norm(x, (D,), w, b).backward(g)
        seen.setdefault(w.grad.array.tobytes() + b.grad.array.tobytes() + x.grad.array.tobytes(), threads)
    assert len(seen) == 1
    np.testing.assert_allclose(b.grad.array, g.array.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)


def test_layer_norm_gradient_of_the_parameters_only(torch, kernels):
    # an input that needs no gradient, a weight and bias that do (a frozen feature extractor's output)
    x = rand(5, 7, dtype=np.float32, grad=False)
    w, b = rand(7, dtype=np.float32), rand(7, dtype=np.float32)
    compare(torch, lambda w, b: F.layer_norm(x, (7,), w, b), lambda w, b: torch.nn.functional.layer_norm(
        T(torch, x), (7,), w, b), (w, b), np.float32)


def test_layer_norm_input_modified_in_place_is_caught(torch):
    # the input is saved (as PyTorch saves it): changing it before backward is the usual version error
    def run(layer_norm, x):
        h = x * 1.0
        y = layer_norm(h, (8,))
        h.mul_(2.0)
        y.sum().backward()

    x = rand(4, 8)
    with pytest.raises(RuntimeError) as ours:
        run(F.layer_norm, x)
    with pytest.raises(RuntimeError) as theirs:
        run(torch.nn.functional.layer_norm, T(torch, x))
    # the same words, the hint too
    assert str(ours.value) == str(theirs.value).replace("torch.", "minigrad.")


def test_layer_norm_strided_input(torch, blocking):
    # a transposed input: normalized over its (strided) last axis, gradient in the input's own layout
    base = rand(6, 3, 5, dtype=np.float32, grad=False)
    x = minigrad.tensor(base.array, requires_grad=True)
    w = rand(6, dtype=np.float32)
    compare(torch, lambda x, w: F.layer_norm(x.transpose(0, 2), (6,), w),
            lambda x, w: torch.nn.functional.layer_norm(x.transpose(0, 2), (6,), w), (x, w), np.float32)


def test_layer_norm_no_rows():
    # zero rows: an empty output and gradient of the input's shape, zero weight and bias gradients
    x = minigrad.tensor(np.zeros((2, 0, 8), np.float32), requires_grad=True)
    w, b = rand(8, dtype=np.float32), rand(8, dtype=np.float32)
    y = F.layer_norm(x, (8,), w, b)
    y.sum().backward()
    assert y.shape == (2, 0, 8) and x.grad.shape == (2, 0, 8)
    assert w.grad.shape == (8,) and not w.grad.array.any() and not b.grad.array.any()


# ---- gelu, relu, softmax, log_softmax ---------------------------------------------------------
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck(kernels, approximate):
    x = rand(3, 4, scale=2.0)
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))
    y = F.gelu(x, approximate)
    # it keeps its input and its output: the output is the array the next layer keeps anyway
    n_saved = 2 if approximate == "none" else 1
    assert y.grad_fn.name() == "GeluBackward0" and y.grad_fn.saved_nbytes() == n_saved * x.nbytes
    if approximate == "none":
        assert y.grad_fn._saved_result.array is y.array


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_vs_torch(torch, blocking, approximate, dtype):
    x = rand(3, 90, 400, dtype=dtype, scale=3.0)  # several blocks, tails beyond |x| = 4
    compare(torch, lambda x: F.gelu(x, approximate=approximate),
            lambda x: torch.nn.functional.gelu(x, approximate=approximate), (x,), dtype)


def test_gelu_bad_approximate_like_torch(torch):
    # nn.GELU takes any string and F.gelu refuses it at the call, with PyTorch's text
    x = [0.5, 1.0]
    with pytest.raises(RuntimeError) as want:
        torch.nn.GELU(approximate="foo")(torch.tensor(x))
    module = nn.GELU(approximate="foo")
    with pytest.raises(RuntimeError) as got:
        module(minigrad.tensor(x))
    assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError) as got:
        F.gelu(minigrad.tensor(x), approximate="foo")
    assert str(got.value) == str(want.value)


def test_gelu_float32_accuracy_and_sign(kernels):
    # against math.erf in float64, over the polynomial's range, its clip and beyond
    x = np.concatenate([np.linspace(-14.0, 14.0, 20001), [0.0, -0.0, 1e-30, -1e-30]]).astype(np.float32)
    xt = minigrad.tensor(x, requires_grad=True)
    y = F.gelu(xt)
    y.sum().backward()
    y = y.array
    assert y.dtype == np.float32
    x64 = x.astype(np.float64)
    ref = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x64])
    assert np.abs(y - ref).max() < 2e-6
    assert np.all(y[x < 0] <= 0.0) and np.all(y[x > 0] > 0.0)  # no sign flip where 1 + erf(x) rounds to 0
    # the derivative Phi(x) + x phi(x)
    dref = np.array([0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                     for v in x64])
    assert np.abs(xt.grad.array - dref).max() < 1e-6
    nan = minigrad.tensor(np.array([np.nan], np.float32), requires_grad=True)
    out = F.gelu(nan)
    out.backward(minigrad.ones(1))
    assert np.isnan(out.array).all() and np.isnan(nan.grad.array).all()


def test_sigmoid_accuracy_extremes_and_gradient(kernels):
    # F.sigmoid, float32: the CPU kernel under 'fast' (one loop), numpy's passes under 'numpy'; against float64's
    # sigmoid to a few ulp wherever the result is a normal float32; float64: the op's numpy form, its bits
    from minigrad.ops.elementwise import sigmoid_array

    x = np.concatenate([np.linspace(-100.0, 100.0, 40001), [0.0, -0.0, 1e-30, -1e-30, np.inf, -np.inf, np.nan]])
    x32 = x.astype(np.float32)
    xt = minigrad.tensor(x32, requires_grad=True)
    y = F.sigmoid(xt)
    g = np.random.default_rng(0).standard_normal(x.shape).astype(np.float32)
    y.backward(minigrad.tensor(g))
    ref = 1.0 / (1.0 + np.exp(-x32.astype(np.float64)))
    normal = ref > np.finfo(np.float32).tiny
    assert y.array.dtype == np.float32 and y.grad_fn.name() == "SigmoidBackward0"
    assert (np.abs(y.array[normal] - ref[normal]) / ref[normal]).max() < 4e-7
    assert np.all(y.array[~normal & ~np.isnan(x)] < np.finfo(np.float32).tiny)  # 0 or subnormal far left
    np.testing.assert_array_equal(y.array[-7:], [0.5, 0.5, 0.5, 0.5, 1.0, 0.0, np.nan])
    r = y.array
    assert np.array_equal(xt.grad.array, g * (r * (np.float32(1.0) - r)), equal_nan=True)  # backward's bits
    x64 = minigrad.tensor(x, requires_grad=True)
    assert np.array_equal(F.sigmoid(x64).array, sigmoid_array(x), equal_nan=True)
    for engine in (minigrad.sigmoid(xt), xt.sigmoid()):  # one op: the engine's sigmoid is F.sigmoid
        assert np.array_equal(engine.array, y.array, equal_nan=True)
    assert gradcheck(F.sigmoid, (rand(3, 4, scale=3.0),))
    assert F.sigmoid(minigrad.tensor([0, 2])).dtype == minigrad.float32  # integers promoted, as the engine's
    assert nn.Sigmoid()(xt).grad_fn.name() == "SigmoidBackward0"


def test_relu():
    x = rand(3, 4)
    assert gradcheck(F.relu, (x,))
    assert F.relu(x).grad_fn.name() == "ReluBackward0"


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_gradcheck(fn, dim):
    x = rand(3, 4, 2)
    f = getattr(F, fn)
    assert gradcheck(lambda x: f(x, dim), (x,))
    assert f(x, dim).grad_fn.name() == ("SoftmaxBackward0" if fn == "softmax" else "LogSoftmaxBackward0")


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_engine_softmax_is_the_functional_op(kernels, fn):
    # minigrad.softmax, Tensor.softmax and F.softmax are one op (the rows to a backend's kernel where one
    # takes them): the same values and gradients, bit for bit, under each kernel setting
    x = rand(6, 33, scale=3.0, dtype=np.float32)
    g = minigrad.tensor(np.random.default_rng(1).standard_normal((6, 33)).astype(np.float32))
    got = []
    for call in (lambda: getattr(F, fn)(x, dim=-1), lambda: getattr(minigrad, fn)(x, dim=-1),
                 lambda: getattr(x, fn)(-1)):
        x.grad = None
        y = call()
        y.backward(g)
        got.append((y.array, x.grad.array))
    for y, gx in got[1:]:
        assert np.array_equal(y, got[0][0]) and np.array_equal(gx, got[0][1])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_vs_torch(torch, blocking, fn, dtype):
    x = rand(50, 7, 300, dtype=dtype, scale=4.0)
    for dim in (-1, 1):
        x.grad = None
        compare(torch, lambda x, d=dim: getattr(F, fn)(x, d), lambda x, d=dim: getattr(torch.nn.functional, fn)(x, d),
                (x,), dtype)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_kernels_agree_with_the_numpy_code_and_pytorch(torch, fn):
    # the last dim's rows go to the CPU kernel (when numba is installed): values, grads, the second
    # derivative (create_graph: the recorded backward op), odd rows, strided input, a row all -inf
    import importlib

    kernel = importlib.import_module(f"minigrad.backends.cpu.{fn}")
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((6, 5, 33)).astype(dtype) * 4
        a[0, 0, :5] = -np.inf  # a row partly masked out
        a[1, 2, 7] = 1e4  # one dominating logit
        a[2, 3, :] = -np.inf  # a row masked out entirely: nan, as PyTorch's
        for x_arr in (a, a.transpose(1, 0, 2), a[:, :, :1]):
            g = rng.standard_normal(x_arr.shape).astype(dtype)
            outs = {}
            for setting in ("fast", "numpy"):
                with minigrad.backends.kernels(setting):
                    x = minigrad.tensor(x_arr, requires_grad=True)
                    y = getattr(F, fn)(x, -1)
                    if setting == "fast" and minigrad.backends._team.available():
                        assert y.grad_fn.impl is kernel
                    y.backward(minigrad.tensor(g))
                    outs[setting] = (y.array, x.grad.array)
            tx = torch.tensor(x_arr, requires_grad=True)
            ty = getattr(torch, fn)(tx, -1)
            ty.backward(torch.tensor(g))
            tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
            for y_arr, gx in outs.values():
                np.testing.assert_allclose(y_arr, ty.detach().numpy(), **tol)
                np.testing.assert_allclose(gx, tx.grad.numpy(), **tol)
    x = minigrad.tensor(rng.standard_normal((4, 9)), requires_grad=True)
    tx = torch.tensor(x.array, requires_grad=True)
    (gx,) = minigrad.autograd.grad(getattr(F, fn)(x, -1)[:, 0].sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad(getattr(torch, fn)(tx, -1)[:, 0].sum(), tx, create_graph=True)
    name = "SoftmaxBackwardDataBackward0" if fn == "softmax" else "LogSoftmaxBackwardDataBackward0"
    assert gx.grad_fn.name() == tgx.grad_fn.name() == name
    (ggx,) = minigrad.autograd.grad((gx * gx).sum(), x)
    (tggx,) = torch.autograd.grad((tgx * tgx).sum(), tx)
    np.testing.assert_allclose(ggx.array, tggx.numpy(), rtol=1e-10, atol=1e-12)


# ---- dropout ----------------------------------------------------------------------------------
def test_dropout_statistics_scaling_and_mask_only_saved():
    minigrad.manual_seed(0)
    x = minigrad.ones(400, 500, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = y.array != 0
    assert abs(kept.mean() - 0.7) < 0.005
    np.testing.assert_allclose(y.array[kept], 1 / 0.7, rtol=1e-6)
    assert y.dtype == minigrad.float32 and y.grad_fn.name() == "NativeDropoutBackward0"
    assert y.grad_fn.saved_nbytes() == x.numel()  # one bool per element
    y.backward(minigrad.full((400, 500), 2.0))
    np.testing.assert_allclose(x.grad.array, np.where(kept, 2 / 0.7, 0.0), rtol=1e-6)


def test_dropout_reproducible_and_identity_when_off():
    x = rand(50, 40)
    minigrad.manual_seed(7)
    a = F.dropout(x, 0.5)
    minigrad.manual_seed(7)
    b = F.dropout(x, 0.5)
    assert np.array_equal(a.array, b.array)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert np.all(F.dropout(x, 1.0).array == 0)
    with pytest.raises(ValueError):
        F.dropout(x, 1.5)


def test_dropout_mask_independent_of_threads(monkeypatch):
    x = minigrad.ones(1500, 1000)  # several random streams
    masks = []
    for threads in ("1", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        minigrad.manual_seed(11)
        masks.append(F.dropout(x, 0.25).array != 0)
    assert np.array_equal(masks[0], masks[1])
    assert abs(masks[0].mean() - 0.75) < 0.003


@pytest.mark.parametrize("shape", [(7,), (12, 64, 128), (1100, 1000)])  # (the last: several random streams)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_kernel_gives_the_numpy_codes_bits(shape, dtype):
    # the CPU kernel compares the op's own random bits and scales in one pass: the same mask, output and
    # gradient as the numpy passes, bit for bit (NaN and inf inputs included), on one thread and on two
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    a.flat[:3] = [np.nan, np.inf, -np.inf]
    g = rng.standard_normal(shape).astype(dtype)
    got = []
    for kernels in ("fast", "numpy"):
        with backends.kernels(kernels), np.errstate(invalid="ignore"):
            minigrad.manual_seed(5)
            x = minigrad.tensor(a, requires_grad=True)
            y = F.dropout(x, 0.3)
            y.backward(minigrad.tensor(g))
            got.append((y.array, x.grad.array, minigrad.get_rng_state()))
    (y1, g1, s1), (y2, g2, s2) = got
    assert y1.dtype == dtype and np.array_equal(y1, y2, equal_nan=True) and np.array_equal(g1, g2) and s1 == s2


def test_dropout_gradcheck_with_fixed_seed():
    x = rand(4, 5)

    def f(x):
        minigrad.manual_seed(3)
        return F.dropout(x, 0.4)

    assert gradcheck(f, (x,))


# ---- cross_entropy ----------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradcheck(kernels, reduction, label_smoothing, weighted):
    x = rand(6, 5)
    w = minigrad.tensor(RNG.random(5) + 0.5) if weighted else None
    t = minigrad.tensor([0, 4, -100, 2, 2, 1])  # one ignored position, a repeated class
    f = lambda x: F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=label_smoothing)
    assert gradcheck(f, (x,))
    assert f(x).grad_fn.name() == ("AddBackward0" if label_smoothing else "NllLossBackward0")  # as PyTorch


def test_cross_entropy_gradient_is_handed_on_uncopied_yet_never_shared():
    # loss.backward() passes the saved gradient of the logits on as it is (no pass over them);
    # a retained graph must still give the same gradient twice, and .grad must not alias it
    x = rand(6, 5, dtype=np.float32)
    t = minigrad.tensor([0, 4, 2, -1, 1, 3])
    loss = F.cross_entropy(x, t, ignore_index=-1)
    loss.backward(retain_graph=True)
    first = x.grad.array.copy()
    x.grad = None
    loss.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.array, first)
    x.grad.array[...] = 0.0  # writing into .grad must not reach what the graph saved
    x.grad = None
    loss.backward()
    np.testing.assert_array_equal(x.grad.array, first)
    (F.cross_entropy(x, t, ignore_index=-1) * 3.0).backward()  # an upstream gradient other than 1
    np.testing.assert_allclose(x.grad.array, 4 * first, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_gradcheck_spatial_and_unbatched(kernels, reduction):
    x = rand(2, 5, 3, 2)
    t = ids(5, (2, 3, 2))
    t.array[0, 1, 0] = 9  # ignore_index=9
    assert gradcheck(lambda x: F.cross_entropy(x, t, ignore_index=9, reduction=reduction, label_smoothing=0.1), (x,))
    assert gradcheck(lambda x: F.cross_entropy(x, minigrad.tensor(3)), (rand(5),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_vs_torch(torch, blocking, dtype, reduction):
    x = rand(8 * 64, 65, dtype=dtype, scale=3.0)
    t = ids(65, (8 * 64,))
    t.array[::7] = -1
    w = minigrad.tensor((RNG.random(65) + 0.5).astype(dtype))
    for kw in (dict(ignore_index=-1), dict(ignore_index=-1, label_smoothing=0.1, weight=w)):
        x.grad = None
        tkw = {k: T(torch, v) if isinstance(v, minigrad.Tensor) else v for k, v in kw.items()}
        compare(torch, lambda x, kw=kw: F.cross_entropy(x, t, reduction=reduction, **kw),
                lambda x, kw=tkw: torch.nn.functional.cross_entropy(x, T(torch, t), reduction=reduction, **kw), (x,),
                dtype)
    x3, t3 = rand(2, 6, 4, 3, dtype=dtype), ids(6, (2, 4, 3))
    compare(torch, lambda x: F.cross_entropy(x, t3, reduction=reduction, label_smoothing=0.3),
            lambda x: torch.nn.functional.cross_entropy(x, T(torch, t3), reduction=reduction, label_smoothing=0.3),
            (x3,), dtype)


def test_cross_entropy_saves_one_array_and_all_ignored(kernels):
    x = rand(16, 10, dtype=np.float32)
    node = F.cross_entropy(x, ids(10, (16,))).grad_fn
    assert node.saved_nbytes() == x.nbytes  # one (N, C) array, no copy of the logits besides
    loss = F.cross_entropy(x, minigrad.tensor([-100] * 16))
    assert math.isnan(loss.item())
    loss.backward()
    assert np.all(x.grad.array == 0)  # as PyTorch


@pytest.mark.parametrize("kw", [{}, dict(label_smoothing=0.1, ignore_index=3), dict(weight="w", reduction="sum")])
def test_cross_entropy_without_grad_gives_the_same_loss(kernels, kw):
    # under no_grad the forward skips the gradient rows: the loss must not change by a bit
    x = rand(50, 7, dtype=np.float32, scale=4.0)
    t = ids(7, (50,))
    kw = {k: (minigrad.tensor(RNG.random(7).astype(np.float32) + 0.5) if v == "w" else v) for k, v in kw.items()}
    with_graph = F.cross_entropy(x, t, **kw)
    with minigrad.no_grad():
        without = F.cross_entropy(x, t, **kw)
    assert with_graph.grad_fn is not None and without.grad_fn is None
    np.testing.assert_array_equal(without.array, with_graph.array)


def test_cross_entropy_errors():
    x = rand(4, 5)
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.cross_entropy(x, minigrad.tensor([0, 1, 5, 2]))
    with pytest.raises(IndexError, match="Target -3"):
        F.cross_entropy(x, minigrad.tensor([0, 1, -3, 2]))
    for one in (5, -1):  # a single target: checked as a number
        with pytest.raises(IndexError, match=rf"Target {one} is out of bounds"):
            F.cross_entropy(x[:1], minigrad.tensor([one]))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(x, minigrad.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 3\], got \[2, 2\]"):
        F.cross_entropy(rand(2, 5, 3), minigrad.tensor([[0, 1], [1, 1]]))
    with pytest.raises(RuntimeError, match="weight"):
        F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3]), weight=rand(4))
    with pytest.raises(ValueError):
        F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3]), reduction="avg")


@pytest.mark.parametrize("kw", [{}, dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=2),
                                dict(label_smoothing=0.1), dict(ignore_index=-1, label_smoothing=1.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_usual_call_is_the_checked_paths_node(torch, monkeypatch, dtype, kw):
    # (N, C) logits, N ids, no weight: one test in front, then the same node and bits as the checked path
    from nn._functional import loss as loss_module

    x, t = rand(32, 27, dtype=dtype, scale=3.0), ids(27, (32,))
    t.array[::5] = 2
    monkeypatch.setattr(loss_module, "_check_class_target", lambda *a: pytest.fail("the usual call was checked"))
    fast = F.cross_entropy(x, t, **kw)
    fast.sum().backward()
    fast_grad, x.grad = x.grad.array.copy(), None
    monkeypatch.undo()
    monkeypatch.setattr(loss_module, "_usual_rows", lambda *a: False)
    checked = F.cross_entropy(x, t, **kw)
    checked.sum().backward()
    assert fast.grad_fn.name() == checked.grad_fn.name() == ("AddBackward0" if kw.get("label_smoothing") else "NllLossBackward0")
    assert fast.dtype == checked.dtype and fast.shape == checked.shape
    assert np.array_equal(fast.array, checked.array) and np.array_equal(fast_grad, x.grad.array)
    tx = torch.tensor(x.array)
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(t.array), **kw)
    np.testing.assert_allclose(fast.array, want.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_cross_entropy_usual_call_still_checks_ids_and_others_take_the_checks(torch):
    x = rand(4, 5, dtype=np.float32)
    with pytest.raises(IndexError, match=r"Target 5 is out of bounds"):
        F.cross_entropy(x, minigrad.tensor([0, 1, 5, 2]))
    for bad in (dict(label_smoothing=1.5), dict(reduction="avg")):
        with pytest.raises(Exception) as want:
            torch.nn.functional.cross_entropy(torch.tensor(x.array), torch.tensor([0, 1, 2, 3]), **bad)
        with pytest.raises(type(want.value)) as got:
            F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3]), **bad)
        assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError, match="label_smoothing must be between"):  # (PyTorch takes it: refused here)
        F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3]), label_smoothing=-0.5)
    with pytest.raises(NotImplementedError) as want:  # (integer logits: PyTorch's log_softmax refuses them)
        torch.nn.functional.cross_entropy(torch.tensor([[1, 2]]), torch.tensor([0]))
    with pytest.raises(NotImplementedError) as got:
        F.cross_entropy(minigrad.tensor([[1, 2]]), minigrad.tensor([0]))
    assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError, match="dtype to be Long"):
        F.cross_entropy(x, minigrad.tensor([0.0, 1.0, 2.0, 3.0]))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8])
def test_cross_entropy_target_checks_with_ignore_index(torch, dtype):
    # the targets are checked in one pass as unsigned, then against ignore_index where some are outside
    x = rand(4, 5)

    def target(*v):
        return minigrad.tensor(np.array(v).astype(dtype))

    if dtype in (np.int32, np.int8):  # PyTorch takes int64 and uint8 ids only
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.cross_entropy(torch.tensor(x.array), torch.tensor(np.array([0, 4, 4, 1], dtype)))
        with pytest.raises(RuntimeError) as got:
            F.cross_entropy(x, target(0, 4, 4, 1))
        assert str(got.value) == str(want.value)
        return
    assert np.isfinite(F.cross_entropy(x, target(0, 4, 4, 1)).item())
    assert np.isfinite(F.cross_entropy(x, target(0, 4, 9, 1), ignore_index=9).item())
    assert np.isfinite(F.cross_entropy(x, target(0, 2, 2, 1), ignore_index=2).item())
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        F.cross_entropy(x, target(0, 9, 7, 1), ignore_index=9)
    if np.issubdtype(dtype, np.signedinteger):
        assert np.isfinite(F.cross_entropy(x, target(0, -100, 3, -100)).item())
        with pytest.raises(IndexError, match=r"^Target -2 is out of bounds\.$"):
            F.cross_entropy(x, target(0, -100, 3, -2))
        with pytest.raises(IndexError, match="Target 5 is out of bounds"):
            F.nll_loss(x, target(-100, 5, 0, 1))


# ---- mse_loss ---------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(torch, reduction):
    x, y = rand(3, 4), rand(3, 4)
    assert gradcheck(lambda x, y: F.mse_loss(x, y, reduction=reduction), (x, y))
    assert F.mse_loss(x, y, reduction=reduction).grad_fn.name() == "MseLossBackward0"
    for dtype in (np.float32, np.float64):
        x, y = rand(5, 6, dtype=dtype), rand(5, 6, dtype=dtype)
        compare(torch, lambda x, y: F.mse_loss(x, y, reduction=reduction),
                lambda x, y: torch.nn.functional.mse_loss(x, y, reduction=reduction), (x, y), dtype)


# ---- scaled_dot_product_attention -------------------------------------------------------------
def _masks(L, S, H=3):
    bool_mask = minigrad.tensor(RNG.random((L, S)) > 0.3)
    bool_mask.array[1] = False  # a fully masked row: zeros, as PyTorch
    return [dict(), dict(is_causal=True), dict(attn_mask=bool_mask),
            dict(attn_mask=minigrad.tensor(RNG.standard_normal((2, 1, L, S)))),
            dict(attn_mask=minigrad.tensor(RNG.random((2, H, L, S)) > 0.5)), dict(scale=0.3)]


@pytest.mark.parametrize("case", range(6))
def test_attention_gradcheck(case):
    q, k, v = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 2)
    kw = _masks(4, 6)[case]
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw), (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, **kw)
    assert y.shape == (2, 3, 4, 2) and y.grad_fn.name() == "ScaledDotProductAttentionBackward0"


def test_attention_gradcheck_dropout_broadcast_and_gqa():
    q, k, v = rand(2, 4, 3, 5), rand(2, 2, 3, 5), rand(2, 2, 3, 4)

    def drop(q, k, v):
        minigrad.manual_seed(1)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)

    assert gradcheck(drop, (q, rand(2, 4, 3, 5), rand(2, 4, 3, 4)))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), (q, rand(3, 5), rand(1, 1, 3, 4)))
    head_mask = minigrad.tensor(RNG.random((2, 4, 3, 3)) > 0.3)
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, head_mask, enable_gqa=True), (q, k, v))
    y = F.scaled_dot_product_attention(rand(3, 5), rand(2, 4, 5), rand(2, 4, 2))  # q with fewer batch dims
    assert y.shape == (2, 3, 2)


def test_attention_on_strided_head_views():
    # heads split off a fused qkv projection, as the GPT does: non-contiguous views, read in place
    x = rand(2, 5, 24)

    def attend(x):
        q, k, v = (x[:, :, i * 8:(i + 1) * 8].view(2, 5, 2, 4).transpose(1, 2) for i in range(3))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert gradcheck(attend, (x,))


def test_attention_gradients_flow_back_to_the_fused_projection_without_copies(torch, monkeypatch):
    # the GPT's path: qkv.split -> view -> transpose -> attention -> transpose -> reshape. q, k, v's
    # gradients are written side by side as qkv is, so the split's backward does not concatenate;
    # the results are PyTorch's all the same, and the output is laid out as PyTorch's is: like q, so
    # that merging the heads back is a view (no copy) in both
    B, L, H, E = 2, 6, 3, 4
    C = H * E
    qkv = rand(B, L, 3 * C)
    q, k, v = (a.view(B, L, H, E).transpose(1, 2) for a in qkv.split(C, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out = y.transpose(1, 2)
    assert out.is_contiguous() and out.view(B, L, C).array.base is not None
    out = out.reshape(B, L, C)
    g = RNG.standard_normal((B, L, C))
    import minigrad.ops.shape as shape_ops

    def no_cat(*args, **kwargs):
        raise AssertionError("the split's backward concatenated")

    monkeypatch.setattr(shape_ops, "cat", no_cat)
    out.backward(minigrad.tensor(g))
    monkeypatch.undo()

    tqkv = T(torch, qkv)
    tq, tk, tv = (a.view(B, L, H, E).transpose(1, 2) for a in tqkv.split(C, dim=2))
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert y.stride() == ty.stride()
    tout = ty.transpose(1, 2).reshape(B, L, C)
    tout.backward(torch.tensor(g))
    close(out, tout, np.float64)
    close(qkv.grad, tqkv.grad, np.float64)


def test_attention_with_expanded_key_value_heads_of_a_fused_projection(torch):
    # multi-query attention off one projection: k and v are one head expanded (stride 0) over the
    # query heads; their gradients cannot be laid out like them (every head would write one place)
    B, L, H, E = 2, 5, 3, 4
    x = rand(B, L, (H + 2) * E)

    def heads(x, lib):
        h = x * 1.0  # the projection's output: one contiguous array
        q, k, v = h.split([H * E, E, E], dim=2)
        q = q.reshape(B, L, H, E).transpose(1, 2)
        k = k.reshape(B, L, 1, E).transpose(1, 2).expand(B, H, L, E)
        v = v.reshape(B, L, 1, E).transpose(1, 2).expand(B, H, L, E)
        return lib.scaled_dot_product_attention(q, k, v)

    y = heads(x, F)
    tx = T(torch, x)
    ty = heads(tx, torch.nn.functional)
    g = RNG.standard_normal(y.shape)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    close(y, ty, np.float64)
    close(x.grad, tx.grad, np.float64)


def test_one_to_one_views():
    from minigrad.device import one_to_one as _one_to_one

    a = np.zeros((2, 6, 36))
    q = a[:, :, 12:24].reshape(2, 6, 3, 4).transpose(0, 2, 1, 3)  # a head view of a fused projection
    assert _one_to_one(a) and _one_to_one(a.T) and _one_to_one(q) and _one_to_one(a[:, ::2])
    assert not _one_to_one(np.broadcast_to(a[:, :1], (2, 5, 36)))  # stride 0
    assert not _one_to_one(np.lib.stride_tricks.as_strided(a, (4, 4), (8, 8)))  # rows overlap


def test_attention_with_one_view_as_query_key_and_value():
    # q, k and v the same view of one array: their gradients must not share one buffer
    x = rand(2, 5, 8)

    def attend(x):
        h = x.view(2, 5, 2, 4).transpose(1, 2)
        return F.scaled_dot_product_attention(h, h, h, is_causal=True)

    assert gradcheck(attend, (x,))


def test_split_backward_joins_side_by_side_gradients_as_a_view_else_concatenates():
    from minigrad.ops.shape import _joined_view

    buf = np.arange(24.0).reshape(2, 12)
    parts = [buf[:, 0:4], buf[:, 4:8], buf[:, 8:12]]
    joined = _joined_view(parts, 1)
    assert joined is not None and np.shares_memory(joined, buf)
    np.testing.assert_array_equal(joined, buf)
    assert _joined_view([buf[:, 4:8], buf[:, 0:4]], 1) is None  # out of order
    assert _joined_view([buf[:, 0:4], buf[:, 5:9]], 1) is None  # a gap
    assert _joined_view([buf[:, 0:4], np.ones((2, 4))], 1) is None  # another buffer
    # through the graph: pieces' gradients that are not side by side are concatenated as before
    x = rand(2, 12)
    a, b, c = x.split(4, dim=1)
    (a * 1.0 + c * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.array, np.repeat([[1.0, 0.0, 3.0]], 4, axis=1).repeat(2, axis=0).reshape(2, 12))


def test_unbind_backward_stacks_evenly_spaced_gradients_as_a_view_else_copies():
    from minigrad.ops.shape import _joined_view

    buf = np.arange(60.0).reshape(2, 5, 3, 2)
    pieces = [buf[:, :, i] for i in range(3)]  # (2, 5, 2) each, one buffer, evenly spaced
    joined = _joined_view(pieces, 2, new_axis=True)
    assert joined is not None and np.shares_memory(joined, buf)
    np.testing.assert_array_equal(joined, buf)
    np.testing.assert_array_equal(_joined_view(pieces, 0, new_axis=True), np.stack(pieces))
    assert _joined_view([buf[:, :, 0], buf[:, :, 2], buf[:, :, 1]], 2, new_axis=True) is None  # out of order
    assert _joined_view([buf[:, :, 0], buf[:, :, 0]], 2, new_axis=True) is None  # one memory twice
    flat = buf.reshape(-1)
    assert _joined_view([flat[0:4], flat[2:6]], 0, new_axis=True) is None  # overlapping pieces
    assert _joined_view([buf[:, :, 0]], 2, new_axis=True) is None  # one piece: stack copies
    # through the graph (nanoGPT's heads as in gpt/model.py): the same gradient either way
    x = rand(2, 4, 3 * 6)
    q, k, v = x.view(2, 4, 3, 2, 3).permute(2, 0, 3, 1, 4).unbind(0)
    (q * 1.0 + v * 3.0).sum().backward()
    want = np.concatenate([np.ones((2, 4, 6)), np.zeros((2, 4, 6)), np.full((2, 4, 6), 3.0)], axis=2)
    np.testing.assert_array_equal(x.grad.array, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_vs_torch(torch, blocking, dtype):
    L = 40
    for kw in _masks(L, L, H=6) + [dict(enable_gqa=True, is_causal=True)]:
        q = rand(2, 6, L, 16, dtype=dtype)
        kh = 3 if kw.get("enable_gqa") else 6
        k, v = rand(2, kh, L, 16, dtype=dtype), rand(2, kh, L, 8, dtype=dtype)
        kw = {a: (minigrad.tensor(b.array.astype(dtype)) if isinstance(b, minigrad.Tensor) and b.array.dtype.kind == "f"
                  else b) for a, b in kw.items()}
        tkw = {a: T(torch, b) if isinstance(b, minigrad.Tensor) else b for a, b in kw.items()}
        compare(torch, lambda q, k, v, kw=kw: F.scaled_dot_product_attention(q, k, v, **kw),
                lambda q, k, v, kw=tkw: torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw), (q, k, v),
                dtype)


@pytest.mark.parametrize("L", [128, 520])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_causal_attention_in_chunks_vs_torch(torch, dtype, L):
    """Long causal sequences are computed in row chunks that skip the future keys (4 or 8 chunks)."""
    q, k, v = rand(1, 3, L, 8, dtype=dtype), rand(1, 3, L, 8, dtype=dtype), rand(1, 3, L, 4, dtype=dtype)
    compare(torch, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), dtype)
    # the skipped keys hold exact zeros in P, on the compiled path and on the numpy passes (P is kept
    # where it is no larger than q, k and v: E = L / 3 here)
    E = -(-L // 3)
    q, k, v = (rand(1, 2, L, E, dtype=dtype) for _ in range(3))
    for on in (True, False):
        with backends.kernels("fast" if on else "numpy"):
            P = F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn._saved_attn.array
        assert np.array_equal(P, np.tril(P)) and np.allclose(P.sum(-1), 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("L", [64, 256])
def test_attention_probabilities_made_again_in_backward_are_the_same_bits(monkeypatch, dtype, L):
    """Longer sequences do not keep P (an (L, S) array per head) for backward but make it again: the
    output and the gradients must be exactly those of keeping it, for any upstream gradient layout."""
    H, E = 3, 8
    qkv = rand(2, L, 3 * H * E, dtype=dtype)
    q, k, v = [a.view(2, L, H, E).transpose(1, 2) for a in qkv.split(H * E, dim=2)]
    g = RNG.standard_normal((2, H, L, E)).astype(dtype)
    results = {}
    for keep in (True, False):
        monkeypatch.setattr(cpu_attention, "_keeps_probabilities", lambda *shape, keep=keep: keep)
        runs = []
        for upstream in ("given", "sum"):  # a contiguous gradient, and sum's stride-0 one
            qkv.grad = None
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            saved = y.grad_fn.saved_nbytes()
            y.backward(minigrad.tensor(g)) if upstream == "given" else y.sum().backward()
            runs.append((y.array.copy(), qkv.grad.array.copy()))
        results[keep] = runs
        if team.available():
            assert saved == 3 * q.nbytes + (2 * H * L * L * q.itemsize if keep else 0)
    for a, b in zip(results[True], results[False]):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("L, kept", [(4, True), (64, True), (65, False), (128, False)])
def test_attention_keeps_the_probabilities_of_narrow_heads_over_a_short_block(L, kept):
    """Heads 16 wide over up to 64 positions (a 2x64 GPT's) keep P for backward, though it is larger
    than q, k and v together: making it again was a third of their backward. Longer ones make it again."""
    if not team.available():
        pytest.skip("the CPU kernels need numba")
    H, E = 4, 16
    qkv = rand(2, L, 3 * H * E, dtype=np.float32)
    q, k, v = qkv.view(2, L, 3, H, E).permute(2, 0, 3, 1, 4).unbind(0)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    P = 2 * H * L * L * 4
    assert y.grad_fn.saved_nbytes() == 3 * q.nbytes + (P if kept else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [False, True])
def test_prepared_attention_forward_is_the_backends_forward(dtype, causal):
    """A replay of attention without a backward (a generated token's) runs the CPU backend's forward as
    prepared once for the layout: the same bits as `forward` for a key count growing one a call (a KV
    cache's) and past where `forward` shares the items out or stops keeping P (run by `forward` then)."""
    if not team.available():
        pytest.skip("the CPU kernels need numba")
    B, H, E = 2, 4, 16
    cache = RNG.standard_normal((2, B, H, 700, E)).astype(dtype)
    for L in (1, 3, 64):  # (64 rows: P not kept from 65 keys on, and the team's from 512)
        q = RNG.standard_normal((B, L, H, E)).astype(dtype).transpose(0, 2, 1, 3)  # heads split off rows
        prepared = cpu_attention.prepared_forward(q, cache[0, :, :, :5], cache[1, :, :, :5], 0.25, causal and L > 1)
        for S in (5, 6, 7, 64, 65, 700):
            k, v = cache[0, :, :, :S], cache[1, :, :, :S]
            want, got = np.empty((B, H, L, E), dtype), np.full((B, H, L, E), np.nan, dtype)
            cpu_attention.forward(want, q, k, v, None, 1.0, 0.25, causal and L > 1)
            prepared(got, q, k, v)
            assert np.array_equal(got, want), (L, S)


def test_attention_without_grad_is_the_recorded_forward(kernels):
    """Under no_grad attention runs its choices made once per layout (a generated token's: the whole context,
    then one query against a KV cache growing by one): the same bits, shape and strides as the forward that
    records, the layouts alternating, the kernels' setting followed (`kernels`: with and without them)."""
    from nn._functional.attention import _attend_arrays

    # heads split off rows; and seq-first rows (L, B, H, E) of one head, whose output's size-1 dim has a stride
    # np.empty_like would not give
    for B, H, E, seq_first in [(1, 4, 16, False), (2, 1, 16, True)]:
        cache = RNG.standard_normal((2, B, H, 40, E)).astype(np.float32)
        for causal, L, S in [(True, 5, 5), (False, 1, 6), (True, 3, 3), (False, 1, 7), (False, 1, 8), (True, 5, 5)]:
            q = minigrad.tensor(RNG.standard_normal((L, B, H, E) if seq_first else (B, L, H, E)).astype(np.float32))
            q = q.permute((1, 2, 0, 3) if seq_first else (0, 2, 1, 3))  # (minigrad.tensor of a view: a copy)
            args = [q, minigrad.tensor(cache[0, :, :, :S]), minigrad.tensor(cache[1, :, :, :S])]
            with minigrad.no_grad():
                got = F.scaled_dot_product_attention(*args, is_causal=causal)
            args[0].requires_grad_()
            want = F.scaled_dot_product_attention(*args, is_causal=causal)
            assert want.grad_fn is not None and got.grad_fn is None
            assert np.array_equal(got.array, want.array) and got.array.strides == want.array.strides, (B, H, L, S)
    planned = [layout for layout in _attend_arrays(False, 0.25, 1).plans if layout[-1] == kernels]
    assert bool(planned) == (kernels == "fast" and team.available())  # (the numpy passes: `_attend` at each call)


def test_attention_without_grad_plans_once_for_a_cache_grown_by_cat():
    """A KV cache grown by cat (a llama script's) is a new array of other batch strides at every key count:
    one plan serves them all (not one made again at each token), with the recorded forward's bits."""
    from nn._functional.attention import _attend_arrays

    if not team.available():
        pytest.skip("the CPU kernels need numba")
    H, E = 4, 16
    attend = _attend_arrays(False, 0.25, 1)
    attend.plans.clear()
    k = v = minigrad.tensor(RNG.standard_normal((1, H, 1, E)).astype(np.float32))
    for _ in range(80):
        q, k_new, v_new = (minigrad.tensor(RNG.standard_normal((1, 1, H, E)).astype(np.float32)).transpose(1, 2)
                           for _ in range(3))
        k, v = minigrad.cat((k, k_new), dim=2), minigrad.cat((v, v_new), dim=2)
        with minigrad.no_grad():
            got = F.scaled_dot_product_attention(q, k, v)
        want = F.scaled_dot_product_attention(q.detach().requires_grad_(), k, v)
        assert np.array_equal(got.array, want.array) and got.array.strides == want.array.strides
    assert len(attend.plans) == 1


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_attention_infinite_scores_like_torch(torch, kernels, value):
    # an infinite query or key entry: +inf scores give rows of NaN and -inf ones drop out, as in PyTorch
    q, k, v = (RNG.standard_normal((2, 3, 8, 4)).astype(np.float32) for _ in range(3))
    q[0, 1, 5, 2] = value
    k[1, 2, 3, 0] = value
    for causal in (True, False):
        with np.errstate(invalid="ignore"):  # inf - inf in the numpy passes: the NaN is the point
            ours = F.scaled_dot_product_attention(*(minigrad.tensor(a) for a in (q, k, v)), is_causal=causal).array
        theirs = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                                                  is_causal=causal).numpy()
        assert np.array_equal(np.isnan(ours), np.isnan(theirs)) and np.isnan(theirs).any()
        np.testing.assert_allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], rtol=1e-5, atol=1e-6)


def test_attention_gradient_of_another_dtype_is_cast(torch):
    # a float64 upstream gradient for a float32 output (PyTorch casts it): the same gradients as
    # handing it in float32, whether P was kept (L = 16) or is made again in backward (L = 64)
    for L in (16, 64):
        qkv = rand(2, L, 3 * 2 * 8, dtype=np.float32)
        q, k, v = [a.view(2, L, 2, 8).transpose(1, 2) for a in qkv.split(16, dim=2)]
        g64 = RNG.standard_normal((2, 2, L, 8))
        grads = []
        for g in (g64, g64.astype(np.float32)):
            qkv.grad = None
            F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(minigrad.tensor(g))
            grads.append(qkv.grad.array.copy())
        assert grads[0].dtype == np.float32 and np.array_equal(grads[0], grads[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask_shape", [(5, 7), (2, 1, 5, 7), (1, 4, 5, 7), (2, 4, 5, 7), (4, 1, 7)])
def test_attention_float_mask_gets_its_gradient_vs_torch(torch, kernels, dtype, mask_shape):
    # a float mask is added to the scores: it gets their gradient, summed over where it was broadcast
    q, k, v = rand(2, 4, 5, 3, dtype=dtype), rand(2, 4, 7, 3, dtype=dtype), rand(2, 4, 7, 2, dtype=dtype)
    mask = rand(*mask_shape, dtype=dtype)
    mask.array[..., 1] = -np.inf  # a key no query sees: a zero gradient there
    compare(torch, F.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention,
            (q, k, v, mask), dtype)
    assert not mask.grad.array[..., 1].any() and mask.grad.array.any()


@pytest.mark.parametrize("bool_mask", [True, False])
def test_masked_attention_softmax_rows_vs_torch(torch, kernels, monkeypatch, bool_mask):
    # a masked attention's softmax runs in the backend's row kernel (the fast path) or numpy's passes:
    # both PyTorch's values, a fully masked row zeros (its gradient too), a NaN score's row NaN
    from minigrad.backends.cpu import softmax as softmax_kernel
    calls = []
    monkeypatch.setattr(softmax_kernel, "forward", lambda x, f=softmax_kernel.forward: calls.append(1) or f(x))
    q, k, v = rand(2, 4, 6, 8, dtype=np.float32), rand(2, 4, 7, 8, dtype=np.float32), rand(2, 4, 7, 5, dtype=np.float32)
    keep = RNG.random((2, 1, 6, 7)) > 0.3
    keep[0, 0, 2] = False  # a query that sees no key
    keep[1, 0, 4] = True
    mask = minigrad.tensor(keep) if bool_mask else minigrad.tensor(np.where(keep, 0.0, -np.inf).astype(np.float32))
    q.array[1, 2, 4, 0] = np.nan  # one score row NaN
    tq, tk, tv, tmask = (T(torch, a) for a in (q, k, v, mask))
    y, ty = F.scaled_dot_product_attention(q, k, v, mask), torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, tmask)
    assert np.array_equal(np.isnan(y.array), np.isnan(ty.detach().numpy()))
    assert not y.array[0, :, 2].any() and np.isnan(y.array[1, 2, 4]).all()
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert bool(calls) == (kernels == "fast" and backends.find("softmax", np.zeros((2, 2), np.float32)) is not None)
    q.array[1, 2, 4, 0] = 0.0  # the gradients without the NaN (it spreads to every key's)
    with torch.no_grad():
        tq[1, 2, 4, 0] = 0.0
    g = RNG.standard_normal(y.shape).astype(np.float32)
    F.scaled_dot_product_attention(q, k, v, mask).backward(minigrad.tensor(g))
    torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, tmask).backward(torch.tensor(g))
    for a, ta in ((q, tq), (k, tk), (v, tv)):
        np.testing.assert_allclose(a.grad.array, ta.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert not q.grad.array[0, :, 2].any()


def test_attention_float_mask_gradcheck_with_gqa_and_the_reference():
    q, k, v, mask = rand(2, 4, 3, 5), rand(2, 2, 4, 5), rand(2, 2, 4, 2), rand(4, 1, 4)
    assert gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, enable_gqa=True), (q, k, v, mask))
    with backends.kernels("reference"):
        assert gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m), (q, rand(2, 1, 4, 5),
                                                                                         rand(2, 1, 4, 2), mask))


def test_long_causal_attention_gradcheck():
    q, k, v = (rand(1, 1, 128, 2, dtype=np.float64) for _ in range(3))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))


def test_attention_saves_qkv_and_probs_and_errors():
    q, k, v = rand(2, 3, 4, 5, dtype=np.float32), rand(2, 3, 6, 5, dtype=np.float32), rand(2, 3, 6, 2, dtype=np.float32)
    node = F.scaled_dot_product_attention(q, k, v).grad_fn
    assert node.saved_nbytes() == q.nbytes + k.nbytes + v.nbytes + 2 * 3 * 4 * 6 * 4
    with pytest.raises(RuntimeError, match="is_causal"):  # (a bool mask and is_causal both apply: PyTorch's CPU op)
        F.scaled_dot_product_attention(q, k, v, attn_mask=minigrad.zeros(4, 6, requires_grad=True), is_causal=True)
    with pytest.raises(RuntimeError, match="embedding size"):
        F.scaled_dot_product_attention(q, rand(2, 3, 6, 4, dtype=np.float32), v)
    with pytest.raises(RuntimeError, match="sequence length"):
        F.scaled_dot_product_attention(q, k, rand(2, 3, 5, 2, dtype=np.float32))



@pytest.mark.parametrize("shapes, dtypes, mask", [
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), ("float16", "float32", "int64"), None),  # dtypes differ
    (((4,), (5,), (5, 4)), ("float32",) * 3, None),  # fewer than 2 dims
    (((4,), (5,), (5, 4)), ("float32",) * 3, "int32"),  # (the dims are checked before the mask)
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), ("float32",) * 3, "uint8"),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), ("float32",) * 3, "float64"),  # a float mask not of the query's dtype
])
def test_attention_input_errors_as_pytorch(shapes, dtypes, mask):
    torch = pytest.importorskip("torch")

    def call(L, Fn):
        q, k, v = (L.zeros(s, dtype=getattr(L, d)) for s, d in zip(shapes, dtypes))
        return Fn.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else
                                               L.zeros(3, 5, dtype=getattr(L, mask)))

    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(RuntimeError) as ours:
        call(minigrad, F)
    assert str(ours.value) == str(theirs.value)



@pytest.mark.parametrize("p", [1.0, -0.1, 1.5])
def test_attention_dropout_p_at_the_ends_as_pytorch(p):
    # PyTorch's: p <= 0 drops nothing, p = 1 everything (zeros, zero gradients), p > 1 raises (all refused before)
    torch = pytest.importorskip("torch")
    q = np.random.default_rng(5).standard_normal((1, 2, 3)).astype(np.float32)
    got = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        t = L.tensor(q, requires_grad=True)
        try:
            out = Fn.scaled_dot_product_attention(t, t, t, dropout_p=p)
        except RuntimeError as e:
            got.append(str(e))
            continue
        out.sum().backward()
        got.append((out.detach().numpy(), t.grad.numpy()))
    if isinstance(got[0], str):
        assert got[1] == got[0]
    elif p == 1.0:
        assert got[1][0].tobytes() == got[0][0].tobytes() and not got[1][1].any() and not got[0][1].any()
    else:  # (float32 sums in either order: a few ulps)
        for ours, theirs in zip(got[1], got[0]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)



@pytest.mark.parametrize("qs, ks, kw", [((2, 3, 4), (2, 0, 4), {}), ((1, 4, 3, 4), (1, 2, 0, 4), {"enable_gqa": True}),
                                        ((3, 4), (0, 4), {"is_causal": True})])
def test_attention_over_no_keys_is_zeros(qs, ks, kw):
    # PyTorch's: an empty sum per query (numpy's max of an empty array raised ValueError)
    torch = pytest.importorskip("torch")
    got = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        q, k, v = L.ones(qs, requires_grad=True), L.ones(ks), L.ones(ks[:-1] + (5,))
        out = Fn.scaled_dot_product_attention(q, k, v, **kw)
        out.sum().backward()
        got.append((tuple(out.shape), out.detach().numpy().tolist(), q.grad.numpy().tolist()))
    assert got[1] == got[0]


# ---- across ops -------------------------------------------------------------------------------
CASES = {
    "linear": (lambda x, w: F.linear(x, w), lambda x, w: R.linear(x, w), lambda: (rand(2, 3, 4), rand(5, 4))),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b), lambda x, w, b: R.layer_norm(x, (6,), w, b),
                   lambda: (rand(3, 4, 6), rand(6), rand(6))),
    "gelu": (F.gelu, R.gelu, lambda: (rand(5, 7),)),
    "softmax": (lambda x: F.softmax(x, -1), lambda x: R.softmax(x, -1), lambda: (rand(5, 7),)),
    "log_softmax": (lambda x: F.log_softmax(x, 0), lambda x: R.log_softmax(x, 0), lambda: (rand(5, 7),)),
    "cross_entropy": (lambda x: F.cross_entropy(x, minigrad.tensor([1, 0, -100, 6]), label_smoothing=0.1),
                      lambda x: R.cross_entropy(x, minigrad.tensor([1, 0, -100, 6]), label_smoothing=0.1),
                      lambda: (rand(4, 7),)),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                  lambda q, k, v: R.scaled_dot_product_attention(q, k, v, is_causal=True),
                  lambda: (rand(2, 5, 4), rand(2, 5, 4), rand(2, 5, 3))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fused_matches_composite(name):
    fused, composite, make = CASES[name]
    a = make()
    b = [x.detach().requires_grad_() for x in a]
    y1, y2 = fused(*a), composite(*b)
    np.testing.assert_allclose(y1.array, y2.array, rtol=1e-12, atol=1e-12)
    y1.sum().backward()
    y2.sum().backward()
    for x1, x2 in zip(a, b):
        np.testing.assert_allclose(x1.grad.array, x2.grad.array, rtol=1e-10, atol=1e-12)


def test_float32_stays_float32_everywhere():
    x = rand(4, 6, 8, dtype=np.float32)
    w8, b8 = rand(8, dtype=np.float32), rand(8, dtype=np.float32)
    outs = [F.linear(x, rand(3, 8, dtype=np.float32), rand(3, dtype=np.float32)), F.layer_norm(x, (8,), w8, b8),
            F.gelu(x), F.gelu(x, "tanh"), F.relu(x), F.softmax(x, -1), F.log_softmax(x, 1), F.dropout(x, 0.2),
            F.cross_entropy(x.reshape(-1, 8), ids(8, (24,)), label_smoothing=0.1, weight=w8.detach()),
            F.mse_loss(x, x.detach() * 0.5), F.scaled_dot_product_attention(x, x, x, is_causal=True),
            F.embedding(ids(8, (3,)), rand(8, 8, dtype=np.float32))]
    for y in outs:
        assert y.dtype == minigrad.float32, y.grad_fn.name()
        x.grad = None
        y.sum().backward()
        assert x.grad is None or x.grad.dtype == minigrad.float32, y.grad_fn.name()


def test_a_backward_on_arrays_refuses_create_graph_unless_it_has_a_recorded_form():
    x = rand(5, 2, 4).log_softmax(2).detach().requires_grad_()
    targets, lengths, target_lengths = minigrad.tensor([[1, 2], [3, 1]]), minigrad.tensor([5, 5]), minigrad.tensor([2, 2])
    (g,) = minigrad.autograd.grad(F.ctc_loss(x, targets, lengths, target_lengths), x)
    assert g.shape == x.shape and not g.requires_grad
    # create_graph=True through an op whose gradient depends on its input and is computed on arrays
    # alone (ctc's, which PyTorch does not differentiate twice either): a gradient whose graph refuses,
    # as PyTorch's, when differentiated, not one that silently lacks the second-order terms
    (g,) = minigrad.autograd.grad(F.ctc_loss(x, targets, lengths, target_lengths), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not implemented"):
        minigrad.autograd.grad(g.sum(), x)
    # dropout's gradient is the incoming one times constants: create_graph needs nothing more ...
    y = rand(3, 4)
    (g,) = minigrad.autograd.grad(F.dropout(y, 0.5).sum(), y, create_graph=True)
    assert not g.requires_grad
    # ... and an incoming gradient that requires grad is carried through, recorded
    minigrad.manual_seed(0)
    out = F.dropout(y, 0.5)
    v = rand(3, 4)
    (g,) = minigrad.autograd.grad(out, y, grad_outputs=v, create_graph=True)
    (gv,) = minigrad.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(gv.numpy(), (out.detach().numpy() != 0) * 2.0)


@pytest.mark.parametrize("q_layout", ["contiguous", "heads of a projection", "heads outer", "rows strided"])
@pytest.mark.parametrize("variant", ["causal", "mask", "value size", "dropout"])
def test_attention_output_is_laid_out_as_torch_lays_it_out(torch, q_layout, variant):
    # PyTorch's fused kernel lays the output out like q (when q's rows are unit-stride); its other
    # path (dropout, a different value size) makes it contiguous. Which layout matters to a user:
    # `.view` works only on a contiguous one.
    B, L, H, E = 2, 5, 3, 4
    base, make_q = {
        "contiguous": ((B, H, L, E), lambda a: a),
        "heads of a projection": ((B, L, 2 * H * E), lambda a: a[:, :, :H * E].view(B, L, H, E).transpose(1, 2)),
        "heads outer": ((H, B, L, E), lambda a: a.transpose(0, 1)),
        "rows strided": ((B, E, L, H), lambda a: a.permute(0, 3, 2, 1)),
    }[q_layout]
    qb, k, v = rand(*base), rand(B, H, L, E), rand(B, H, L, 2 if variant == "value size" else E)
    kw = dict(is_causal=variant != "mask", attn_mask=rand(L, L) if variant == "mask" else None,
              dropout_p=0.5 if variant == "dropout" else 0.0)
    y = F.scaled_dot_product_attention(make_q(qb), k, v, **kw)
    targs = [T(torch, a, grad=False) for a in (qb, k, v)]
    tkw = dict(kw, attn_mask=None if kw["attn_mask"] is None else T(torch, kw["attn_mask"], grad=False))
    ty = torch.nn.functional.scaled_dot_product_attention(make_q(targs[0]), *targs[1:], **tkw)
    assert y.stride() == ty.stride()
    if variant != "dropout":
        close(y, ty, np.float64)


@pytest.mark.parametrize("case", ["k, v over the batch", "k, v over the heads", "q expanded"])
def test_attention_with_broadcast_inputs_is_laid_out_as_torch_lays_it_out(torch, case):
    B, L, H, E = 2, 5, 3, 4
    base = rand(B, L, 2 * H * E)
    make_q = lambda a: a[:, :, :H * E].view(B, L, H, E).transpose(1, 2)  # noqa: E731
    kv_shape = {"k, v over the batch": (1, H, L, E), "k, v over the heads": (B, 1, L, E)}.get(case, (B, H, L, E))
    k, v = rand(*kv_shape), rand(*kv_shape)
    if case == "q expanded":
        base = rand(1, L, 2 * H * E)
        make_q = lambda a: a[:, :, :H * E].view(1, L, H, E).transpose(1, 2).expand(B, H, L, E)  # noqa: E731
    y = F.scaled_dot_product_attention(make_q(base), k, v, is_causal=True)
    targs = [T(torch, a, grad=False) for a in (base, k, v)]
    ty = torch.nn.functional.scaled_dot_product_attention(make_q(targs[0]), targs[1], targs[2], is_causal=True)
    assert y.stride() == ty.stride()
    close(y, ty, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("L,causal", [(64, True), (64, False), (256, True)])  # 256: causal row chunks, P made again
def test_fused_attention_gives_the_same_bits_on_any_number_of_threads(monkeypatch, dtype, L, causal):
    """Where attention runs each (batch, head) item in one compiled call, the items are shared by the
    kernels' thread team; every item is computed the same way on any thread, so the outputs and
    gradients are the same bits with one thread (the kernels' plain loop) and with the team. At L = 256
    P is not kept: backward makes it again, a group of items at a time."""
    H, E = 4, 16
    qkv = rand(24, L, 3 * H * E, dtype=dtype)
    q, k, v = [a.view(24, L, H, E).transpose(1, 2) for a in qkv.split(H * E, dim=2)]
    g = minigrad.tensor(RNG.standard_normal((24, H, L, E)).astype(dtype))

    def run(threads):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        qkv.grad = None
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(g)
        return o.array.copy(), qkv.grad.array.copy()

    one, shared = run("1"), run("2")
    assert np.array_equal(one[0], shared[0]) and np.array_equal(one[1], shared[1])
    if team.threads() > 1:  # the team ran (where numba's OpenMP or TBB layer loads)
        assert cpu_attention._attention_items._team_compiled is not None
        assert cpu_attention._attention_items_backward._team_compiled is not None
    small_groups = run("2") if L < 256 else None
    if L == 256:  # made again in groups of 2 items instead of 32: the same bits
        monkeypatch.setattr(cpu_attention, "_items_per_group", lambda L, S, itemsize: 2)
        small_groups = run("2")
    assert np.array_equal(one[1], small_groups[1])


def test_causal_attention_is_bit_identical_from_call_to_call(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    qkv = rand(12, 256, 3 * 64, dtype=np.float32)
    q, k, v = [a.view(12, 256, 4, 16).transpose(1, 2) for a in qkv.split(64, dim=2)]
    outs = set()
    for _ in range(8):
        qkv.grad = None
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(minigrad.ones_like(o))
        outs.add((o.array.tobytes(), qkv.grad.array.tobytes()))
    assert len(outs) == 1


@pytest.mark.parametrize("name,shape", [("dropout", (4, 6)), ("dropout1d", (2, 3, 5)), ("dropout2d", (2, 3, 2, 2)),
                                        ("dropout3d", (2, 3, 2, 2, 2)), ("alpha_dropout", (4, 6)),
                                        ("feature_alpha_dropout", (2, 3, 4))])
def test_inplace_dropout_writes_into_its_input_as_pytorch(torch, name, shape):
    a = minigrad.tensor(np.random.default_rng(0).uniform(1.0, 2.0, shape).astype(np.float32), requires_grad=True)
    minigrad.manual_seed(3)
    expected = getattr(F, name)(a * 2, 0.5, True)  # the same draw, not in place
    x = a * 2
    version = x._version
    minigrad.manual_seed(3)
    y = getattr(F, name)(x, 0.5, True, inplace=True)
    assert y is x and x._version > version
    np.testing.assert_array_equal(x.array, expected.array)
    x.sum().backward()
    g = a.grad.array.copy()
    a.grad = None
    expected.sum().backward()
    np.testing.assert_array_equal(g, a.grad.array)  # the gradient through the write is the dropout's
    # off, or p = 0: the input itself, untouched; a leaf that requires grad refuses the write, as PyTorch's
    x = a * 2
    assert getattr(F, name)(x, 0.5, False, inplace=True) is x and x._version == 0
    t = torch.ones(shape, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.functional, name)(t, 0.5, True, inplace=True)
    with pytest.raises(RuntimeError) as ours:
        getattr(F, name)(a, 0.5, True, inplace=True)
    assert str(ours.value) == str(theirs.value)


def test_dropout_module_inplace_writes_into_its_input():
    x = minigrad.ones(200)
    with minigrad.no_grad():
        y = nn.Dropout(0.5, inplace=True)(x)
    assert y is x and set(np.unique(x.array)) <= {0.0, 2.0} and (x.array == 0).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_picks_the_gradient_as_pytorch(torch, dtype):
    # where x <= 0 the gradient is +0.0 whatever comes in (a NaN, a negative: not multiplied by the mask)
    x = np.array([-1.0, -2.0, 3.0, 0.0, -0.0, np.nan], dtype=dtype)
    g = np.array([np.nan, -5.0, 1.0, 2.0, -np.inf, 4.0], dtype=dtype)
    t = torch.tensor(x, requires_grad=True)
    torch.relu(t).backward(torch.tensor(g))
    for f in (F.relu, minigrad.relu, nn.ReLU()):
        a = minigrad.tensor(x, requires_grad=True)
        f(a).backward(minigrad.tensor(g))
        np.testing.assert_array_equal(a.grad.array, t.grad.numpy())
        assert not np.signbit(a.grad.array[[0, 1, 3, 4]]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [6, 3 * team.TEAM_MIN_ELEMENTS + 5])  # (the second large enough for the thread team)
def test_relu_and_one_sided_clamps_keep_a_negative_zero_and_nan_as_pytorch(torch, dtype, n):
    # PyTorch's x < 0 ? 0 : x keeps -0.0 and NaN (numpy's maximum(x, 0) gives +0.0 at the tie). (Not maximum
    # and minimum: PyTorch's give -0.0 or +0.0 at a tie depending on the size, its vector loop's or not.)
    x = np.random.default_rng(0).standard_normal(n).astype(dtype)
    x[:6] = [-0.0, 0.0, np.nan, -1.0, np.inf, -np.inf]
    calls = {
        "relu": lambda L, t: L.relu(t), "F.relu": lambda L, t: L.nn.functional.relu(t),
        "ReLU": lambda L, t: L.nn.ReLU()(t), "relu_": lambda L, t: L.relu_(t.clone()),
        "clamp(min=0)": lambda L, t: L.clamp(t, min=0), "clamp(max=0)": lambda L, t: t.clamp(max=0.0),
        "clamp_min": lambda L, t: t.clamp_min(0.0), "clamp_max": lambda L, t: t.clamp_max(0),
        "clamp_(min=0)": lambda L, t: t.clone().clamp_(min=0), "clamp_(max=0)": lambda L, t: t.clone().clamp_(max=0),
    }
    for name, f in calls.items():
        got = f(minigrad, minigrad.tensor(x)).numpy()
        want = f(torch, torch.tensor(x)).numpy()
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), name
    with minigrad.no_grad():
        t = minigrad.tensor(x)
        F.relu(t, inplace=True)
    assert np.array_equal(t.numpy().view(np.uint8), torch.relu(torch.tensor(x)).numpy().view(np.uint8))


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("L,S", [(4, 4), (3, 5)])
def test_sdpa_with_a_mask_and_is_causal_applies_both_as_pytorch(torch, mask_kind, L, S):
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((2, 3, n, 8)).astype(np.float64) for n in (L, S, S))
    m = rng.random((L, S)) > 0.3 if mask_kind == "bool" else rng.standard_normal((L, S))
    m[:, 0] = True if mask_kind == "bool" else m[:, 0]  # (no row masked out entirely)
    outs = []
    for lib, fn in ((minigrad, F.scaled_dot_product_attention), (torch, torch.nn.functional.scaled_dot_product_attention)):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        mask = lib.tensor(m)
        y = fn(*ts, attn_mask=mask, is_causal=True)
        (y * lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) % 5)).sum().backward()
        grads = [t.grad for t in ts]
        if mask_kind == "float":  # a mask that requires grad is refused with both, in PyTorch's words
            with pytest.raises(RuntimeError) as refused:
                fn(*ts, attn_mask=lib.tensor(m, requires_grad=True), is_causal=True)
            grads.append(lib.tensor([float(len(str(refused.value)))]))
        outs.append([np.asarray(y.detach().numpy())] + [np.asarray(g.numpy()) for g in grads])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_attention_refuses_a_non_tensor_as_torch(torch):
    # each argument in turn (a Parameter is a Tensor): PyTorch's TypeError, naming the argument and its position
    def refusal(lib, functional, pos):
        args = [lib.zeros(1, 2, 3, 4) for _ in range(3)]
        args[pos] = [1.0]
        with pytest.raises(TypeError) as caught:
            functional.scaled_dot_product_attention(*args)
        return str(caught.value)

    for pos in range(3):
        assert refusal(minigrad, F, pos) == refusal(torch, torch.nn.functional, pos)
    p = nn.Parameter(minigrad.ones(1, 2, 3, 4))
    assert F.scaled_dot_product_attention(p, p, p).shape == (1, 2, 3, 4)
