"""Forward values and gradients against PyTorch on the same inputs, including property tests."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mg_op_table import CASE_BY_NAME, CASES, make_inputs

import minigrad as mg
from minigrad.ops.reduction import _log_softmax_backward_array

torch = pytest.importorskip("torch")

TOL = {"float64": dict(atol=1e-10, rtol=1e-10), "float32": dict(atol=1e-5, rtol=1e-4)}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run_both(fn, arrays, dtype="float64", seed=0):
    """Run fn(L, *leaves) in both libraries; loss = sum_k (out_k * W_k).sum(); return outs, loss, grads."""
    rng = np.random.default_rng(seed + 1000)
    results = {}
    weights = None
    for L in (mg, torch):
        dt = getattr(L, dtype)
        leaves = [L.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        outs = [o for o in _outputs(fn(L, *leaves)) if o.dtype == dt]
        if weights is None:
            weights = [rng.standard_normal(tuple(o.shape)) for o in outs]
        loss = None
        for o, w in zip(outs, weights):
            term = (o * L.tensor(w, dtype=dt)).sum()
            loss = term if loss is None else loss + term
        loss.backward()
        results[L.__name__] = (
            [o.detach().numpy() for o in outs],
            loss.item(),
            [None if x.grad is None else x.grad.numpy() for x in leaves],
        )
    return results["minigrad"], results["torch"]


def assert_same(got, want, dtype="float64"):
    tol = TOL[dtype]
    (g_outs, g_loss, g_grads), (w_outs, w_loss, w_grads) = got, want
    assert len(g_outs) == len(w_outs)
    for g, w in zip(g_outs, w_outs):
        assert g.shape == w.shape
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **tol)
    np.testing.assert_allclose(g_loss, w_loss, **tol)
    for g, w in zip(g_grads, w_grads):
        assert (g is None) == (w is None)
        if g is not None:
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_op_matches_torch(name, dtype):
    case = CASE_BY_NAME[name]
    arrays = make_inputs(case)
    assert_same(*run_both(case.fn, arrays, dtype), dtype)


@pytest.mark.parametrize("name", [c.name for c in CASES if c.layout])
def test_op_output_layout_matches_torch(name):
    # same contiguity as PyTorch's outputs, so that a later .view() works (or fails) alike
    case = CASE_BY_NAME[name]
    arrays = make_inputs(case)
    layouts = []
    for L in (mg, torch):
        outs = _outputs(case.fn(L, *[L.tensor(a, requires_grad=True) for a in arrays]))
        layouts.append([(tuple(o.shape), o.is_contiguous()) for o in outs])
    assert layouts[0] == layouts[1]


@pytest.mark.parametrize("name", ["exp2", "matmul(2,2,3)x(3,2)", "softmax_last", "var_dim", "index_tensor_repeats"])
def test_second_derivative_matches_torch(name):
    case = CASE_BY_NAME[name]
    arrays = make_inputs(case)
    res = []
    for L in (mg, torch):
        xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
        out = sum((o * o).sum() for o in _outputs(case.fn(L, *xs)))
        grads = L.autograd.grad(out, xs, create_graph=True)
        total = sum((g * g.tanh()).sum() for g in grads)
        total.backward()
        res.append([x.grad.numpy() for x in xs])
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, atol=1e-10, rtol=1e-10)


def test_comparisons_and_argmax_match_torch():
    a = np.array([[0.5, -1.0, 2.0], [2.0, 0.0, -3.0]])
    b = np.array([0.5, 1.0, -3.0])
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        got = getattr(mg.tensor(a), op)(mg.tensor(b))
        want = getattr(torch.tensor(a), op)(torch.tensor(b))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.dtype == mg.bool
    for dim in (None, 0, 1):
        got = mg.tensor(a).argmax() if dim is None else mg.tensor(a).argmax(dim)
        want = torch.tensor(a).argmax() if dim is None else torch.tensor(a).argmax(dim)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.dtype == mg.int64
    got, want = mg.tensor(a).argmax(1, keepdim=True), torch.tensor(a).argmax(1, keepdim=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_max_dim_returns_values_and_indices_like_torch():
    a = np.array([[0.5, -1.0, 2.0], [2.5, 0.0, -3.0]])
    for keepdim in (False, True):
        g = mg.tensor(a).max(1, keepdim=keepdim)
        w = torch.tensor(a).max(1, keepdim=keepdim)
        np.testing.assert_array_equal(g.values.numpy(), w.values.numpy())
        np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
        gv, gi = mg.tensor(a).min(0, keepdim=keepdim)
        wv, wi = torch.tensor(a).min(0, keepdim=keepdim)
        np.testing.assert_array_equal(gv.numpy(), wv.numpy())
        np.testing.assert_array_equal(gi.numpy(), wi.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_max_min_dim_same_bits_as_torch_over_every_dim_and_layout(dtype):
    # the values are the input's own entries at the first max (or min): -0.0 beside 0.0 keeps the first's
    # sign, a NaN (of either sign) wins with its index; any dim, keepdim, strided and empty inputs
    rng = np.random.default_rng(2)
    bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
    for trial in range(120):
        shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(1, 5))))
        a = rng.integers(-2, 3, shape).astype(dtype)
        if dtype != "int64":
            r = rng.random(shape)
            a[r < 0.3] = -0.0
            a[(r > 0.3) & (r < 0.4)] = np.nan
            a[(r > 0.4) & (r < 0.45)] = -np.nan
        if trial % 3 == 1 and a.ndim > 1:  # a transposed view
            a = a.swapaxes(0, -1)
        elif trial % 3 == 2:  # every other entry of the last dim
            a = np.concatenate([a, a], axis=-1)[..., ::2]
        d = int(rng.integers(-a.ndim, a.ndim))
        for name in ("max", "min"):
            for keepdim in (False, True):
                g = getattr(mg.from_numpy(a), name)(d, keepdim=keepdim)
                w = getattr(torch.from_numpy(a), name)(d, keepdim=keepdim)
                assert g.values.shape == w.values.shape and g.indices.shape == w.indices.shape
                assert str(g.values.dtype)[8:] == str(w.values.dtype)[5:] and g.indices.dtype == mg.int64
                np.testing.assert_array_equal(g.values.numpy().view(bits), w.values.numpy().view(bits))
                np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
    a = np.zeros((2, 0, 3), dtype=np.float32)  # an empty other dim: empty results
    for d in (0, 2, -1):
        g, w = mg.from_numpy(a).max(d), torch.from_numpy(a).max(d)
        assert g.values.shape == w.values.shape and g.indices.shape == w.indices.shape


def test_max_dim_gradient_goes_to_first_max_like_torch():
    a = np.array([[[1.0, 3.0], [3.0, -0.0]], [[np.nan, 0.0], [2.0, 0.0]], [[1.0, 1.0], [0.5, 2.0]]])
    for d in (0, 1, -1):
        for keepdim in (False, True):
            x, xt = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            v, _ = x.max(d, keepdim=keepdim)
            vt, _ = xt.max(d, keepdim=keepdim)
            w = np.random.default_rng(d + 5).standard_normal(tuple(vt.shape))
            (v * mg.tensor(w)).sum().backward()
            (vt * torch.tensor(w)).sum().backward()
            assert v.grad_fn.name() == vt.grad_fn.name()
            np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_topk_indices_like_torch():
    a = np.array([[0.5, -1.0, 2.0, 1.5], [2.5, 0.0, -3.0, 9.0]])
    for largest in (True, False):
        g = mg.tensor(a).topk(3, largest=largest)
        w = torch.tensor(a).topk(3, largest=largest)
        np.testing.assert_array_equal(g.values.numpy(), w.values.numpy())
        np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
        assert g.indices.dtype == mg.int64


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_descending_order_puts_nan_above_inf_and_keeps_ties_like_torch(dtype):
    # PyTorch orders NaN above +inf and -0.0 equal to 0.0: sort, argsort and topk, values and (stable) indices
    rng = np.random.default_rng(1)
    for _ in range(200):
        a = (rng.integers(-3, 4, (3, 9)) * 0.5).astype(dtype)
        r = rng.random(a.shape)
        a[r < 0.15] = np.nan
        a[(r > 0.15) & (r < 0.25)] = np.inf
        a[(r > 0.25) & (r < 0.3)] = -np.inf
        a[(r > 0.3) & (r < 0.35)] = -0.0
        d, k = int(rng.integers(0, 2)), int(rng.integers(1, 4))
        g, w = mg.tensor(a).sort(dim=d, descending=True, stable=True), torch.tensor(a).sort(dim=d, descending=True, stable=True)
        np.testing.assert_array_equal(g.values.numpy(), w.values.numpy())
        np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
        np.testing.assert_array_equal(mg.tensor(a).argsort(dim=d, descending=True, stable=True).numpy(),
                                      torch.tensor(a).argsort(dim=d, descending=True, stable=True).numpy())
        for largest in (True, False):  # (which of several equal values topk picks is PyTorch's own: values only)
            np.testing.assert_array_equal(mg.tensor(a).topk(k, dim=d, largest=largest).values.numpy(),
                                          torch.tensor(a).topk(k, dim=d, largest=largest).values.numpy())


def test_topk_of_one_like_torch():
    # the largest alone (a decoder's `topk(1)`): a NaN wins, over +inf too; -0.0 and 0.0 keep their own sign
    rows = np.array([[1.0, 3.0, 2.0, 0.5], [1.0, np.nan, 2.0, np.inf], [np.inf, 0.0, np.nan, 1.0],
                     [-0.0, -1.0, -2.0, -3.0], [-np.inf, -np.inf, -np.inf, -5.0]], dtype=np.float32)
    for a, dim in ((rows, 1), (rows.T.copy(), 0), (rows[1], 0), (rows.astype(np.int64)[[0, 3]], -1)):
        g, w = mg.tensor(a).topk(1, dim=dim), torch.tensor(a).topk(1, dim=dim)
        np.testing.assert_array_equal(g.values.numpy(), w.values.numpy())
        np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
        assert g.indices.dtype == mg.int64
    x = mg.tensor(rows[[0, 3]], requires_grad=True)
    xt = torch.tensor(rows[[0, 3]], requires_grad=True)
    v, i = x.topk(1)
    (v * mg.tensor([[2.0], [3.0]])).sum().backward()
    vt, it = xt.topk(1)
    (vt * torch.tensor([[2.0], [3.0]])).sum().backward()
    assert v.grad_fn.name() == "TopkBackward0" and not i.requires_grad
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_softmax_extremes_like_torch():
    a = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, 5.0]])
    for fn in ("softmax", "log_softmax"):
        g = getattr(mg.tensor(a), fn)(-1).numpy()
        w = getattr(torch.tensor(a), fn)(-1).numpy()
        np.testing.assert_allclose(g, w)
    g = mg.tensor(a).logsumexp(-1).numpy()
    w = torch.tensor(a).logsumexp(-1).numpy()
    np.testing.assert_allclose(g, w)


def test_sigmoid_and_tanh_extremes_like_torch():
    a = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    for fn in ("sigmoid", "tanh", "exp", "relu"):
        x, t = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        gy, ty = getattr(x, fn)(), getattr(t, fn)()
        np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy())
        gy.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_sigmoid_has_the_bits_of_its_formula():
    # sigmoid's array code works in place: the bits stay those of where(x >= 0, r, e r), r = 1 / (1 + e),
    # e = exp(-|x|), for every dtype, layout, 0-d inputs and the extremes (nan, inf, -0.0, subnormals)
    from minigrad.ops.elementwise import sigmoid_array

    x = np.random.default_rng(0).standard_normal(3000) * 30
    x[:14] = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 100, -100, 1e-30, -1e-30, 1e-310, -1e-310, 88.7, -88.7]
    for dtype in (np.float16, np.float32, np.float64):
        a = x.astype(dtype)
        for v in (a, a.reshape(30, 100)[:, ::3], a.reshape(30, 100).T, a[:0], a[7:8].reshape(()), dtype(-3.5)):
            e = np.exp(-np.abs(v))
            r = 1.0 / (1.0 + e)
            want, got = np.where(v >= 0, r, e * r), sigmoid_array(v)
            assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
            assert got.strides == want.strides and np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("shape", [(6, 4), (6,), (6, 2, 3)])
@pytest.mark.parametrize("id_dtype", [np.int64, np.int32])  # (a uint8 index is a mask, as in PyTorch)
def test_index_backward_sums_repeated_rows_like_add_at_and_torch(shape, id_dtype):
    # C[ids] with repeated (and negative) ids: the gradient sums each row's contributions in the order of
    # the ids, so the bits are np.add.at's; the values and the second derivative are PyTorch's
    rng = np.random.default_rng(1)
    ids = rng.integers(-6, 6, (9, 4)).astype(id_dtype)
    ids[0, :2] = ids[1, :2] = ids[0, 0]  # repeats, surely
    c = rng.standard_normal(shape)
    for dtype in (np.float32, np.float64):
        g = rng.standard_normal(ids.shape + shape[1:]).astype(dtype)
        want = np.zeros(shape, dtype)
        np.add.at(want, (ids,), g)
        x = mg.tensor(c.astype(dtype), requires_grad=True)
        x[mg.tensor(ids)].backward(mg.tensor(g))
        assert x.grad.array.dtype == dtype and np.array_equal(x.grad.array, want)
    res = []
    for L in (mg, torch):
        x = L.tensor(c, requires_grad=True)
        y = (x[L.tensor(ids.astype(np.int64))] ** 3).sum()
        (gx,) = L.autograd.grad(y, x, create_graph=True)
        (gx * L.tensor(c)).sum().backward()
        res.append((gx.detach().numpy(), x.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(50, 8), (50,), (50, 2, 3)])
def test_index_add_rows_sum_repeats_like_add_at_and_torch(shape, monkeypatch):
    # index_add along dim 0 (EmbeddingBag's bag sums) runs the CPU backend's row loop, as C[ids]'s backward
    # does: np.add.at's bits (repeats added in the order of the ids), PyTorch's values and gradients
    pytest.importorskip("numba")  # (the backend's loop is asked for: it needs numba)
    from minigrad.backends.cpu import embedding as cpu_embedding

    calls = []
    add_rows = cpu_embedding.add_rows
    monkeypatch.setattr(cpu_embedding, "add_rows", lambda *a: calls.append(1) or add_rows(*a))
    rng = np.random.default_rng(2)
    ids = rng.integers(0, shape[0], 400)
    a, src = rng.standard_normal(shape), rng.standard_normal((400,) + shape[1:])
    for dtype in (np.float32, np.float64):
        want = a.astype(dtype)
        np.add.at(want, ids, src.astype(dtype) * dtype(0.5))
        got = mg.tensor(a.astype(dtype)).index_add(0, mg.tensor(ids), mg.tensor(src.astype(dtype)), alpha=0.5)
        assert got.dtype == mg.tensor(want).dtype and np.array_equal(got.numpy(), want)
    assert calls
    res = []
    for L in (mg, torch):
        x, s = L.tensor(a, requires_grad=True), L.tensor(src, requires_grad=True)
        y = x.index_add(0, L.tensor(ids), s, alpha=0.5)
        (y * y).sum().backward()
        assert type(y.grad_fn).__name__ == "IndexAddBackward0"
        res.append((y.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,dims", [((64, 30, 64), (1,)), ((1920, 64), (0,)), ((60, 5, 6, 7), (0, 1)),
                                        ((4, 50, 6, 7), (1, 2)), ((300, 1, 2), (1,)), ((40, 7, 3), (0, 1))])
def test_sum_of_middle_dims_numpy_bits_and_torch(shape, dims, monkeypatch):
    # a run of dims before the last of a contiguous array is summed by the CPU backend's loop (numpy's
    # inner loops are short there): numpy's bits, -0.0 kept; sum, mean and a broadcast bias's
    # gradient take it; values and grad_fn as PyTorch's
    pytest.importorskip("numba")  # (the backend's loop is asked for: it needs numba)
    from minigrad.backends.cpu import sum as cpu_sum

    calls = []
    forward = cpu_sum.forward
    monkeypatch.setattr(cpu_sum, "forward", lambda a: calls.append(1) or forward(a))
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal(shape).astype(dtype)
        a.reshape(-1)[::5] = -0.0
        for keepdim in (False, True):
            got = mg.tensor(a).sum(dim=dims, keepdim=keepdim).numpy()
            want = a.sum(axis=dims, keepdims=keepdim)
            assert got.shape == want.shape and np.array_equal(got.view(np.uint8), want.view(np.uint8))
            assert np.array_equal(mg.tensor(a).mean(dim=dims, keepdim=keepdim).numpy(), a.mean(axis=dims, keepdims=keepdim))
    assert calls
    res = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        b = L.tensor(rng.standard_normal(shape[-1]) if L is mg else res[0][3], requires_grad=True)
        y = x.sum(dim=dims)
        ((x + b) ** 2).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), b.grad.numpy(), b.detach().numpy(), type(y.grad_fn).__name__))
    for g, w in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert res[0][4] == res[1][4]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_sums_and_means_have_numpys_bits_and_torchs_values(dtype):
    # sum and mean of a batch's size (numpy's reduction called directly, the mean's division by the count
    # done in the array's dtype): numpy's bits, for counts that do not divide evenly, and PyTorch's values
    rng = np.random.default_rng(5)
    for shape, dim in [((32, 64), 0), ((32, 64), -1), ((7, 13), (0, 1)), ((32, 3, 27), (0, -2)),
                       ((3, 11, 5), (-1, 0)), ((9,), 0)]:
        a = (rng.standard_normal(shape) * rng.choice([1e-20, 1.0, 1e20], shape)).astype(dtype)
        dims = dim if isinstance(dim, int) else tuple(d % len(shape) for d in dim)
        for keepdim in (False, True):
            got_sum = mg.tensor(a).sum(dim, keepdim=keepdim).numpy()
            got_mean = mg.tensor(a).mean(dim, keepdim=keepdim).numpy()
            assert got_sum.dtype == dtype and np.array_equal(got_sum, a.sum(axis=dims, keepdims=keepdim))
            assert got_mean.dtype == dtype and np.array_equal(got_mean, a.mean(axis=dims, keepdims=keepdim))
            want = torch.tensor(a).mean(dim, keepdim=keepdim).numpy()
            np.testing.assert_allclose(got_mean, want, rtol=0, atol=np.abs(a).max() * (1e-6 if dtype == np.float32 else 1e-14))


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_whole_tensor_reduction_with_keepdim_is_the_dim_overload_like_torch(reduction):
    # PyTorch's `x.sum()` is SumBackward0; `x.sum(dim=None, keepdim=True)` goes through the dim overload,
    # SumBackward1 (mean likewise), its result (1, 1) and its gradient expanded back
    a = np.arange(6.0).reshape(2, 3) / 7
    x, tx = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for kw in ({}, {"dim": None, "keepdim": True}):
        y, ty = getattr(x, reduction)(**kw), getattr(tx, reduction)(**kw)
        assert y.grad_fn.name() == ty.grad_fn.name() and tuple(y.shape) == tuple(ty.shape)
        (y * 3).sum().backward()
        (ty * 3).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-15)  # (summation orders differ)
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_full_sums_have_numpys_bits_and_torchs_values_and_gradients(dtype):
    # `t.sum()` of every element: numpy's pairwise add.reduce (the bits of `a.sum()`), of contiguous and
    # strided arrays, a 0-d one and an empty one; a 0-d tensor of the dtype, SumBackward0 and its gradient
    rng = np.random.default_rng(6)
    big = (rng.standard_normal((128, 130)) * rng.choice([1e-3, 1.0, 1e3], (128, 130))).astype(dtype)
    X = mg.tensor(big)
    for t in (X, X.T, X[::3, 1::2], X[5, 7], X[:0]):  # (views of X: the strided arrays themselves summed)
        a = t.array
        got = t.sum()
        assert got.shape == () and got.dtype == t.dtype and got.array.dtype == dtype
        assert got.array.tobytes() == np.asarray(a.sum()).tobytes()
        x, tx = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        y, ty = x.sum(), tx.sum()
        assert y.grad_fn.name() == ty.grad_fn.name() == "SumBackward0"
        (y * 3).backward()
        (ty * 3).backward()
        assert x.grad.dtype == x.dtype and np.array_equal(x.grad.numpy(), tx.grad.numpy())
        tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
        np.testing.assert_allclose(float(y), float(ty), rtol=tol, atol=tol * float(np.abs(a.astype(np.float64)).sum()))
    kept = mg.tensor(big).sum(keepdim=True) if dtype != np.float16 else None  # (keepdim with no dim: the general path)
    if kept is not None:
        assert kept.shape == torch.tensor(big).sum(dim=(0, 1), keepdim=True).shape


def test_mean_over_more_than_2_24_elements_has_numpys_bits():
    # past 2^24 a count is not always a float32: the mean divides as numpy does, in float64
    a = np.broadcast_to(np.array([[1.1, 3.3]], dtype=np.float32), (2 ** 24 + 3, 2))
    assert np.array_equal(mg.tensor(a).mean(0).numpy(), a.mean(axis=0))


@pytest.mark.parametrize("dim", [2, -3, (0, 2), (0, -2), (1, 1)])
def test_reduction_dim_errors_as_torch(dim):
    a = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(Exception) as want:
        torch.tensor(a).sum(dim)
    with pytest.raises(type(want.value), match=None) as got:
        mg.tensor(a).sum(dim)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape", [(1, 200), (32, 1), (1, 1), (200,), (), (3, 1, 200)])
def test_broadcast_operands_gradients_are_numpys_sums_and_torchs(shape):
    # a hand-written BatchNorm's `gain * (h - mean) / std + bias`: each broadcast operand's gradient is the
    # upstream gradient summed over the stretched dims, of the operand's shape, as PyTorch's
    rng = np.random.default_rng(7)
    h = rng.standard_normal((32, 200)).astype(np.float32)
    row = (rng.random(shape) + 1.0).astype(np.float32)
    grads = []
    for L in (mg, torch):
        x, r = L.tensor(h, requires_grad=True), L.tensor(row, requires_grad=True)
        (r * x + r).sum().backward()
        grads.append(r.grad.numpy())
    assert grads[0].shape == shape and grads[0].dtype == np.float32
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5)


@pytest.mark.parametrize("shape", [(1, 200), (32, 1), (200,), (), (3, 1, 200)])
def test_subtracted_operand_gradient_is_torchs(shape):
    # `x - r` with r broadcast: r's gradient is minus the upstream one summed to r's shape (computed on the
    # arrays when no graph of it is wanted), and x's the upstream one, each of its operand's dtype
    rng = np.random.default_rng(8)
    h = rng.standard_normal((32, 200)).astype(np.float32)
    row = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((3, 32, 200) if len(shape) == 3 else (32, 200)).astype(np.float32)
    grads = []
    for L in (mg, torch):
        x, r = L.tensor(h, requires_grad=True), L.tensor(row, requires_grad=True)
        ((x - r) * L.tensor(w)).sum().backward()
        grads.append((x.grad.numpy(), r.grad.numpy()))
    for a, b in zip(*grads):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)

def test_pow_edge_cases_like_torch():
    base = np.array([0.0, 0.0, 1.0, 2.0])
    expo = np.array([2.0, 0.0, 0.0, 0.5])
    res = []
    for L in (mg, torch):
        b = L.tensor(base, requires_grad=True)
        e = L.tensor(expo, requires_grad=True)
        (b**e).sum().backward()
        res.append((b.grad.numpy(), e.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_pow_by_a_scalar_has_torchs_bits_where_torch_treats_the_exponent_apart(dtype):
    # PyTorch computes x ** 3 as x*x*x (a GELU's cube), x ** -2 as 1 / (x*x), x ** -0.5 as 1 / sqrt(x): the
    # same bits here, negative bases, -0.0, infinities and NaN included, and the gradient of the cube
    x = np.random.default_rng(0).standard_normal(4099).astype(dtype) * 3
    x[:5] = [-0.0, 0.0, -np.inf, np.inf, np.nan]
    for e in (3, 3.0, -2.0, -0.5):
        with np.errstate(all="ignore"):
            want = torch.pow(torch.tensor(x), e).numpy()
        got = mg.pow(mg.tensor(x), e).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"exponent {e}")
    xs = [L.tensor(x[5:], requires_grad=True) for L in (mg, torch)]
    for t in xs:
        (t ** 3.0).sum().backward()
    np.testing.assert_array_equal(xs[0].grad.numpy(), xs[1].grad.numpy())


@pytest.mark.parametrize("e", [4, 5.0, -3.0, 7, 10.0])
def test_pow_by_a_whole_exponent_of_negative_bases_like_torch(e):
    # other whole exponents: the sign of an odd power follows the base (-0.0 and -inf too), values within a
    # rounding of PyTorch's, and |x| ** e's own value for a negative x (a power's rounding does not depend on
    # the base's sign)
    x = np.random.default_rng(1).standard_normal(2053).astype(np.float32) * 2
    x[:4] = [-0.0, 0.0, -np.inf, np.nan]
    with np.errstate(all="ignore"):
        got = mg.tensor(x).pow(e).numpy()
        want = torch.tensor(x).pow(e).numpy()
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(x)]), np.signbit(want[~np.isnan(x)]))
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)
        np.testing.assert_array_equal(np.abs(got), mg.tensor(np.abs(x)).pow(e).numpy())


@pytest.mark.parametrize("e", [3, -2.0, -0.5, 5, 4.0, -3])
def test_pow_of_a_0d_tensor_by_a_whole_exponent_as_torch(e):
    # a 0-d tensor's power is a 0-d tensor (the odd powers' sign put back into an array, not a numpy scalar),
    # with its gradient
    base = 4.0 if e == -0.5 else -2.0
    got, want = mg.tensor(base, requires_grad=True), torch.tensor(base, requires_grad=True)
    for t in (got, want):
        (t ** e).backward()
    assert (got ** e).shape == () and (got ** e).item() == (want ** e).item()
    assert got.grad.item() == want.grad.item()

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_scalar_array_bits_are_its_formulas_on_every_value_class(dtype):
    # each exponent's formula written out (x*x*x; 1 / (x*x); 1 / sqrt(x); |x| ** e, the sign put back for an
    # odd e), bit for bit, NaN payloads included, on random bit patterns (every class: subnormals, infinities,
    # NaNs of both signs) and -0.0, whatever the layout: rows, a strided view, a 0-d array (a 0-d array back)
    from minigrad.ops.elementwise import pow_scalar_array

    uint = np.uint32 if dtype == "float32" else np.uint64
    rng = np.random.default_rng(7)
    x = rng.integers(0, np.iinfo(uint).max, 60000, dtype=uint, endpoint=True).view(dtype)
    fi = np.finfo(dtype)
    x[:12] = [-0.0, 0.0, -np.inf, np.inf, np.nan, -np.nan, 1, -1, fi.tiny, -fi.smallest_subnormal, fi.max, -fi.max]
    with np.errstate(all="ignore"):
        for e in (3, 3.0, -2, -2.0, -0.5, 4, 4.0, 5, -3, -3.0, 6, 7.0, -4, 2**53):
            if e == 3:
                want = x * x * x
            elif e == -2:
                want = 1 / (x * x)
            elif e == -0.5:
                want = 1 / np.sqrt(x)
            else:
                want = np.power(np.abs(x), e)
                want = np.copysign(want, x) if e % 2 else want
            for got, ref in ((pow_scalar_array(x, e), want), (pow_scalar_array(x.reshape(-1, 4), e), want.reshape(-1, 4)),
                             (pow_scalar_array(x[::3], e), want[::3])):
                assert got.dtype == x.dtype and got.shape == ref.shape
                np.testing.assert_array_equal(got.view(uint), ref.view(uint), err_msg=f"exponent {e}")
            for v, w in zip(x[:12], want[:12]):
                got = pow_scalar_array(np.asarray(v), e)
                assert type(got) is np.ndarray and got.shape == () and got.dtype == x.dtype
                assert got.view(uint) == w.view(uint), (e, v)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", [2, 3, 1, 4, -1, -2.0, 0.5, -0.5, 1.5, 2.5])
def test_pow_scalar_backward_on_arrays_is_the_recorded_formulas_and_torchs(dtype, e):
    # `(y_pred - y).pow(2).sum().backward()`: without a graph of the backward, PowBackward0 runs its formula on
    # the arrays; with create_graph the same formula runs through recorded ops: the same bits, torch's values
    rng = np.random.default_rng(3)
    for shape in [(), (7,), (4, 5)]:
        x = (rng.random(shape) + 0.5).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        fast, graph = (mg.tensor(x, requires_grad=True) for _ in range(2))
        (fast ** e).backward(mg.tensor(g))
        (recorded,) = mg.autograd.grad(graph ** e, graph, mg.tensor(g), create_graph=True)
        assert type(fast.grad.numpy()) is np.ndarray and fast.grad.shape == shape and fast.grad.dtype == fast.dtype
        np.testing.assert_array_equal(fast.grad.numpy(), recorded.detach().numpy())
        want = torch.tensor(x, requires_grad=True)
        (want ** e).backward(torch.tensor(g))
        np.testing.assert_allclose(fast.grad.numpy(), want.grad.numpy(), rtol=2e-6 if dtype == "float32" else 1e-12)


def test_prod_like_torch():
    for a in (np.array([[1.5, -2.0, 0.5], [3.0, 0.0, 2.0]]), np.array([[0.0, 0.0, 2.0], [1.0, 2.0, 3.0]])):
        for dim in (None, 0, 1):
            res = []
            for L in (mg, torch):
                x = L.tensor(a, requires_grad=True)
                y = x.prod() if dim is None else x.prod(dim)
                (y * y.detach().abs().add(1)).sum().backward()
                res.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
            np.testing.assert_allclose(res[0][0], res[1][0])
            np.testing.assert_allclose(res[0][1], res[1][1])
            assert res[0][2] == res[1][2]


def test_multi_step_training_like_torch():
    # a small MLP trained by hand for a few steps: losses and weights stay equal to PyTorch's
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((8, 5)), rng.integers(0, 3, 8)
    W1, W2 = rng.standard_normal((5, 7)) * 0.3, rng.standard_normal((7, 3)) * 0.3
    hist = []
    for L in (mg, torch):
        w1, w2 = L.tensor(W1, requires_grad=True), L.tensor(W2, requires_grad=True)
        x, y = L.tensor(X), L.tensor(Y)
        losses = []
        for _ in range(5):
            h = (x @ w1).tanh()
            logp = (h @ w2).log_softmax(-1)
            loss = -logp.gather(1, y[:, None]).mean()
            loss.backward()
            with L.no_grad():
                for w in (w1, w2):
                    w -= 0.5 * w.grad
                    w.grad.zero_()
            losses.append(loss.item())
        hist.append((losses, w1.detach().numpy(), w2.detach().numpy()))
    np.testing.assert_allclose(hist[0][0], hist[1][0], atol=1e-12)
    np.testing.assert_allclose(hist[0][1], hist[1][1], atol=1e-12)
    np.testing.assert_allclose(hist[0][2], hist[1][2], atol=1e-12)


# ---- property tests --------------------------------------------------------------------------------
@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together: drop leading dims and set dims to 1 at random."""
    nd = draw(st.integers(0, 3))
    base = draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))

    def derive():
        lead = draw(st.integers(0, nd))
        dims = base[lead:]
        return tuple(1 if draw(st.booleans()) else d for d in dims)

    return derive(), derive()


BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (b * b + 0.5),
    "pow": lambda L, a, b: (a * a + 0.5) ** b,
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "where": lambda L, a, b: L.where(a > b, a * 2, b),
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=-1.5),
    "masked_fill_mix": lambda L, a, b: a * (b > 0) + b,
    "masked_fill_bcast": lambda L, a, b: a.masked_fill(b > 0, 0.5) + b,  # (a mask larger than a: a broadcast to it)
}


@SETTINGS
@given(shapes=broadcast_pair(), op=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_like_torch(shapes, op, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    assert_same(*run_both(BINARY[op], arrays, "float64", seed))


@pytest.mark.parametrize("shapes", [[(3, 1), (2, 3, 4)], [(4,), (3, 1)], [(1, 4), (2, 1, 4)]])
def test_masked_fill_broadcasts_its_input_to_a_larger_mask_like_torch(shapes):
    # PyTorch's out-of-place masked_fill broadcasts input and mask together (minigrad refused a mask
    # larger than the input); the gradient sums back over the broadcast
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    assert_same(*run_both(BINARY["masked_fill_bcast"], arrays, "float64", 0))


@SETTINGS
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_binary_broadcast_float32_like_torch(shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    assert_same(*run_both(lambda L, a, b: (a * b + a / (b * b + 1) - b).tanh(), arrays, "float32", seed), "float32")


# unary steps keep values bounded; binary steps combine two earlier values (all of shape (3, 4))
UNARY_STEPS = {
    "tanh": lambda L, x: x.tanh(), "sigmoid": lambda L, x: x.sigmoid(), "relu": lambda L, x: x.relu(),
    "exp_tanh": lambda L, x: x.tanh().exp(), "neg": lambda L, x: -x, "affine": lambda L, x: x * 1.5 + 0.25,
    "abs": lambda L, x: x.abs(), "square": lambda L, x: x.square() * 0.5, "sqrt": lambda L, x: (x * x + 1).sqrt(),
    "rsqrt": lambda L, x: (x * x + 1).rsqrt(), "log_sigmoid": lambda L, x: x.sigmoid().log(),
    "clamp": lambda L, x: x.clamp(-1, 1), "softmax": lambda L, x: x.softmax(-1), "log_softmax": lambda L, x: x.log_softmax(0),
    "center": lambda L, x: x - x.mean(1, keepdim=True), "scale": lambda L, x: x / (x.std(0, keepdim=True) + 1),
    "lse": lambda L, x: x - x.logsumexp(1, keepdim=True), "amax": lambda L, x: x - x.amax(0, keepdim=True),
    "max_dim": lambda L, x: x * x.max(1, keepdim=True)[0].tanh(), "var": lambda L, x: x * x.var(1, keepdim=True),
    "transpose": lambda L, x: x.T.contiguous().T, "reshape": lambda L, x: x.reshape(12).reshape(3, 4) + x.contiguous().view(4, 3).T.T.reshape(3, 4),
    "permute_cols": lambda L, x: x[:, L.tensor([3, 1, 1, 0])], "rows": lambda L, x: L.cat([x[1:], x[:1]]),
    "stack_mean": lambda L, x: L.stack([x, x * 2]).mean(0), "split_cat": lambda L, x: L.cat(x.split([1, 3], dim=1)[::-1], 1),
    "tril": lambda L, x: x.tril() + x.triu(1) * 0.5, "gather": lambda L, x: x.gather(1, L.tensor([[0, 0, 1, 3]] * 3)),
    "masked_fill": lambda L, x: x.masked_fill(x > 0.5, 0.5), "matmul": lambda L, x: (x @ x.T) @ x * 0.25,
    "sum_bcast": lambda L, x: x * x.sum(0).tanh(), "index_int": lambda L, x: x * x[1],
    "topk": lambda L, x: x * x.topk(2, dim=1)[0].sum(1, keepdim=True).tanh(),
    "unsqueeze": lambda L, x: (x.unsqueeze(0) * x.unsqueeze(1)[:, :, :]).sum(1) * 0.1,
}
BINARY_STEPS = {
    "add": lambda L, a, b: a + b, "sub": lambda L, a, b: a - b, "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (b * b + 1), "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b), "where": lambda L, a, b: L.where(a > b, a, b * 0.5),
    "pow": lambda L, a, b: (a * a + 0.5) ** b.tanh(), "bcast_row": lambda L, a, b: a + b[0],
}


@st.composite
def programs(draw):
    n = draw(st.integers(3, 8))
    steps = []
    for _ in range(n):
        if draw(st.booleans()):
            steps.append(("u", draw(st.sampled_from(sorted(UNARY_STEPS))), draw(st.integers(0, 10**6))))
        else:
            steps.append(("b", draw(st.sampled_from(sorted(BINARY_STEPS))), draw(st.integers(0, 10**6)),
                          draw(st.integers(0, 10**6))))
    return steps


def run_program(steps):
    def fn(L, x, w, v, m):
        values = [x, w * x, v + x, m @ x.tanh() * 0.5]  # leaves of shapes (3,4), (4,), (3,1), (3,3)
        for step in steps:
            if step[0] == "u":
                values.append(UNARY_STEPS[step[1]](L, values[step[2] % len(values)]))
            else:
                a, b = values[step[2] % len(values)], values[step[3] % len(values)]
                values.append(BINARY_STEPS[step[1]](L, a, b))
        return values[-1] + values[len(values) // 2] * 0.5

    return fn


@SETTINGS
@given(steps=programs(), seed=st.integers(0, 2**16))
def test_random_graphs_like_torch(steps, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((3, 1)),
              rng.standard_normal((3, 3))]
    got, want = run_both(run_program(steps), arrays, "float64", seed)
    # values can grow through a few products: compare relative to their scale
    scale = max(1.0, float(np.max(np.abs(want[0][0]))))
    for g, w in zip(got[2], want[2]):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, atol=1e-10 * scale, rtol=1e-9)
    np.testing.assert_allclose(got[0][0], want[0][0], atol=1e-10 * scale, rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], atol=1e-10 * scale, rtol=1e-10)


@SETTINGS
@given(steps=programs(), seed=st.integers(0, 2**16))
def test_random_graphs_float32_like_torch(steps, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((3, 1)),
              rng.standard_normal((3, 3))]
    got, want = run_both(run_program(steps), arrays, "float32", seed)
    scale = max(1.0, float(np.max(np.abs(want[0][0]))))
    for g, w in zip(got[2], want[2]):
        assert (g is None) == (w is None)
        if g is None:
            continue
        gscale = max(1.0, float(np.max(np.abs(w))))
        np.testing.assert_allclose(g, w, atol=1e-5 * max(scale, gscale), rtol=1e-4)
    np.testing.assert_allclose(got[0][0], want[0][0], atol=1e-5 * scale, rtol=1e-4)


@pytest.mark.parametrize("fn", ["std", "var"])
def test_std_and_var_backward_on_arrays_has_the_recorded_ones_bits(fn):
    # with no graph of the backward wanted, std and var differentiate on arrays; create_graph=True records
    # the same passes as Tensor ops: the bits agree (zero spread, no degrees of freedom left, float32 and 64)
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((4, 5, 3)).astype(dtype)
        a[:, 2, 1] = 1.5  # a constant slice: std 0 there
        for kw in ({}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": 0, "correction": 0},
                   {"dim": 2, "correction": 3}, {"dim": -1, "correction": 4, "keepdim": True}):
            g = rng.standard_normal(getattr(mg.tensor(a), fn)(**kw).shape).astype(dtype)
            grads = []
            for create_graph in (False, True):
                x = mg.tensor(a, requires_grad=True)
                (gx,) = mg.autograd.grad(getattr(x, fn)(**kw), x, mg.tensor(g), create_graph=create_graph)
                grads.append(gx.detach().numpy())
            assert grads[0].dtype == dtype
            assert np.array_equal(grads[0], grads[1], equal_nan=True), (dtype, kw)
            t = torch.tensor(a, requires_grad=True)
            (tg,) = torch.autograd.grad(getattr(t, fn)(**kw), t, torch.tensor(g))
            np.testing.assert_allclose(grads[0], tg.numpy(), rtol=1e-5, atol=1e-6)


def test_zero_std_and_var_gradients_like_torch():
    # std of a constant slice: PyTorch's gradient is 0 there (not 0/0)
    a = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 5.0]])
    for fn in (lambda t: t.std(0), lambda t: t.var(0), lambda t: t.std(), lambda t: t[:, :1].std(0, keepdim=True)):
        res = []
        for L in (mg, torch):
            x = L.tensor(a, requires_grad=True)
            fn(x).sum().backward()
            res.append(x.grad.numpy())
        np.testing.assert_allclose(res[0], res[1], atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("needs", [(True, True), (False, True), (True, False)])
def test_matrix_products_like_torch(dtype, needs):
    # 2-D @ 2-D of one float dtype (matmul's shortest path): values, dtype, node name and gradients as
    # PyTorch's, for contiguous and transposed operands, plain tensors and parameters
    import nn

    rng = np.random.default_rng(7)
    a, b, g = (rng.standard_normal(s).astype(dtype) for s in ((5, 3), (4, 3), (5, 4)))
    for transpose_b in (False, True):
        for parameter in (False, True):
            res = []
            for L in (mg, torch):
                x = L.tensor(a, requires_grad=needs[0])
                w = L.tensor(b.T.copy() if not transpose_b else b, requires_grad=needs[1])
                if parameter:
                    w = (torch.nn if L is torch else nn).Parameter(w.detach(), requires_grad=needs[1])
                out = x @ (w.T if transpose_b else w)
                out.backward(L.tensor(g))
                res.append((out, x.grad, w.grad))
            (m, mx, mw), (t, tx, tw) = res
            assert str(m.dtype).split(".")[1] == str(t.dtype).split(".")[1] and tuple(m.shape) == tuple(t.shape)
            assert m.grad_fn.name() == t.grad_fn.name() == "MmBackward0"
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), **TOL[dtype])
            for mg_grad, torch_grad in ((mx, tx), (mw, tw)):
                assert (mg_grad is None) == (torch_grad is None)
                if mg_grad is not None:
                    np.testing.assert_allclose(mg_grad.numpy(), torch_grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsqrt_and_reciprocal_bits_like_torch(dtype):
    # zeros of each sign, negatives, subnormals, +-inf and NaN among ordinary values: PyTorch's bits. (Not
    # float16: PyTorch's rsqrt rounds its vector blocks' results to half once, its last few elements twice.)
    rng = np.random.default_rng(5)
    info = np.finfo(dtype)
    a = (rng.standard_normal(500) * 10.0 ** rng.integers(-3, 4, 500)).astype(dtype)
    a[:8] = [0.0, -0.0, -1.0, info.smallest_subnormal, info.tiny, np.inf, -np.inf, np.nan]
    for name in ("rsqrt", "reciprocal"):
        got = getattr(mg, name)(mg.tensor(a)).numpy()
        want = getattr(torch, name)(torch.tensor(a)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_float16_rsqrt_rounds_once_like_torch():
    # RMSNorm's rsqrt of a half mean square: PyTorch takes it in float32 and rounds to half once (in its
    # vector blocks, so the length here is a multiple of any block width); 1 / sqrt in half rounded twice.
    rng = np.random.default_rng(6)
    a = (np.abs(rng.standard_normal((16, 64))) * 10.0 ** rng.integers(-3, 4, (16, 64))).astype(np.float16)
    a[0, :4] = [0.0, np.inf, -1.0, np.nan]
    got = mg.rsqrt(mg.tensor(a)).numpy()
    want = torch.rsqrt(torch.tensor(a)).numpy()
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mg.tensor(a[3, 5:6]).rsqrt().numpy(), want[3, 5:6])  # (one number's path)


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "silu"])
def test_float16_activation_and_gradient_bits_like_torch(op):
    # PyTorch's half kernels take these in float32 and round once (sigmoid's backward alone rounds in half, in
    # its own order); numpy's half arithmetic rounds each step, an ulp off on some elements. Rows of 64: any
    # vector block width divides them.
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((16, 64)) * 3).astype(np.float16)
    g = rng.standard_normal((16, 64)).astype(np.float16)
    outs = []
    for lib, F in ((mg, mg.nn.functional), (torch, torch.nn.functional)):
        x = lib.tensor(a, requires_grad=True)
        y = F.softmax(x, -1) if op == "softmax" else getattr(F, op)(x)
        y.backward(lib.tensor(g))
        outs.append((y.detach().numpy(), x.grad.numpy()))
    (got, got_grad), (want, want_grad) = outs
    assert got.dtype == want.dtype == got_grad.dtype == np.float16
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_grad, want_grad)


def test_float16_log_softmax_backward_bits_like_torch():
    # (its forward is left aside: PyTorch's half log_softmax rounds as neither half nor float32 arithmetic does)
    rng = np.random.default_rng(8)
    y = torch.log_softmax(torch.tensor((rng.standard_normal((16, 64)) * 3).astype(np.float16)), -1)
    g = rng.standard_normal((16, 64)).astype(np.float16)
    want = torch.ops.aten._log_softmax_backward_data(torch.tensor(g), y, 1, torch.float16).numpy()
    got = _log_softmax_backward_array(g, y.numpy(), 1)  # (the op's backward, fed torch's forward result)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_topk_of_one_row_with_nan_and_ties_like_torch(dtype):
    # the largest of one row (sampling's top-k) sort -x, whose NaNs numpy puts last: a NaN anywhere in the row
    # (or none), ties, infs, signed zeros and a strided row give torch's stable sort's values and indices
    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        a = (rng.integers(-3, 4, (1, 2 * n)) * 0.5).astype(dtype)
        r = rng.random(a.shape)
        a[r < 0.1 * (trial % 3)] = np.nan  # (a third of the rows without any)
        a[(r > 0.3) & (r < 0.4)] = np.inf
        a[(r > 0.4) & (r < 0.45)] = -np.inf
        a[(r > 0.45) & (r < 0.5)] = -0.0
        x = mg.tensor(a)[:, ::2] if trial % 2 else mg.tensor(a[:, :n])
        xt = torch.tensor(a)[:, ::2] if trial % 2 else torch.tensor(a[:, :n])
        k = int(rng.integers(0, n + 1))
        want = xt.sort(dim=-1, descending=True, stable=True)
        with mg.no_grad():
            got = x.topk(k)
        np.testing.assert_array_equal(got.values.numpy(), want.values[:, :k].numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices[:, :k].numpy())
        got = x.view(-1).sort(descending=True, stable=True)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices[0].numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsqrt_of_one_element_like_torch_without_warnings(dtype):
    # one element (RMSNorm's of a generated token) skips errstate where it cannot warn: positive, zero,
    # negative, subnormal, inf and NaN each give torch's bits and no numpy warning, recorded or not
    info = np.finfo(dtype)
    for v in (2.5, 1e-30, info.smallest_subnormal, info.max, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan):
        a = np.full((1, 1, 1), v, dtype=dtype)
        want = torch.rsqrt(torch.tensor(a)).numpy()
        for grad in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = mg.rsqrt(mg.tensor(a, requires_grad=grad))
            assert got.dtype == getattr(mg, dtype) and got.shape == (1, 1, 1)
            np.testing.assert_array_equal(got.detach().numpy(), want)


@pytest.mark.parametrize("grad", [False, True])
def test_topk_is_sorts_first_k_like_torch(grad):
    # topk's short-row path against the stable sort (equal values in index order) and torch's values,
    # along every dim, largest or not, sorted or not, with and without recording
    rng = np.random.default_rng(2)
    for _ in range(100):
        a = (rng.integers(-3, 4, (2, 5, 7)) * 0.5).astype(np.float32)
        r = rng.random(a.shape)
        a[r < 0.1] = np.nan
        a[(r > 0.1) & (r < 0.2)] = np.inf
        a[(r > 0.2) & (r < 0.25)] = -0.0
        d = int(rng.integers(-3, 3))
        k = int(rng.integers(0, a.shape[d] + 1))
        largest, sorted_ = bool(rng.integers(2)), bool(rng.integers(2))
        x = mg.tensor(a, requires_grad=grad)
        with mg.set_grad_enabled(grad):
            v, i = x.topk(k, dim=d, largest=largest, sorted=sorted_)
        s = mg.tensor(a).sort(dim=d, descending=largest, stable=True)
        np.testing.assert_array_equal(i.numpy(), np.take(s.indices.numpy(), np.arange(k), axis=d))
        np.testing.assert_array_equal(v.detach().numpy(), torch.tensor(a).topk(k, dim=d, largest=largest).values.numpy())


def test_view_minus_one_by_c_takes_the_short_path_and_gives_the_general_paths_shape_as_torch():
    # view(-1, C) and view(B, C) with two Python ints (B * C the size) work out the shape themselves; anything
    # else goes through _infer_shape
    from minigrad.ops import shape as shape_ops

    calls = []
    infer = shape_ops._infer_shape
    shape_ops._infer_shape = lambda s, n: calls.append(s) or infer(s, n)
    try:
        for dims, args, short in [((4, 3, 5), (-1, 15), True), ((4, 3, 5), (-1, 5), True), ((0, 6), (-1, 3), True),
                                  ((4, 3, 5), (12, 5), True), ((4, 3, 5), (-1, np.int64(5)), False),
                                  ((4, 3, 5), (-1, 7), False), ((4, 3, 5), (-1, 0), False),
                                  ((4, 3, 5), (5, -1), False), ((4, 3, 5), (-1, -1), False)]:
            a = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims)
            for grad in (False, True):
                calls.clear()
                x, w = mg.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)
                try:
                    want = w.view(*args)
                except RuntimeError as e:
                    with pytest.raises(RuntimeError) as got:
                        x.view(*args)
                    assert str(got.value) == str(e)
                else:
                    v = x.view(*args)
                    assert v.shape == tuple(want.shape) and v._base is x
                    assert v.shape == infer(tuple(int(s) for s in args), a.size)
                    np.testing.assert_array_equal(v.detach().numpy(), want.detach().numpy())
                    assert (v.grad_fn is None) if not grad else v.grad_fn.name() == want.grad_fn.name()
                assert (not calls) == short, (dims, args)
    finally:
        shape_ops._infer_shape = infer


def test_chunk_without_recording_gives_views_as_torch():
    # chunk's pieces under no_grad: views of the input sharing its version counter, as PyTorch's
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    with mg.no_grad(), torch.no_grad():
        g, w = mg.tensor(a), torch.tensor(a)
        gp, wp = g[:, 1:].chunk(2, dim=-1), w[:, 1:].chunk(2, dim=-1)
        assert [p.shape for p in gp] == [tuple(p.shape) for p in wp]
        gp[1].add_(1.0)
        wp[1].add_(1.0)
        g.mul_(2.0)
        w.mul_(2.0)
    np.testing.assert_array_equal(g.numpy(), w.numpy())
    for p, q in zip(gp, wp):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert p._version == q._version and p._base is g


def test_transpose_without_recording_gives_views_as_torch():
    # transpose under no_grad (attention's heads while generating) is the view alone: values, strides' order,
    # the shared version counter and base, and grad mode's refusal to write through a view of a leaf, as PyTorch's
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for grad in (False, True):
        g, w = mg.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)
        with mg.no_grad(), torch.no_grad():
            gt, wt = g.transpose(0, -1), w.transpose(0, -1)
            assert gt.shape == tuple(wt.shape) and gt.is_contiguous() == wt.is_contiguous()
            assert gt.grad_fn is None and wt.grad_fn is None
            gt[0].add_(1.0)
            wt[0].add_(1.0)
        np.testing.assert_array_equal(gt.detach().numpy(), wt.detach().numpy())
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
        assert gt._version == wt._version == g._version and gt._base is g
        if grad:
            with pytest.raises(RuntimeError) as e:
                gt.mul_(2)
            with pytest.raises(RuntimeError) as f:
                wt.mul_(2)
            assert str(e.value) == str(f.value)


def test_cat_without_recording_like_torch():
    # cat under no_grad (a KV cache grown while generating): a new tensor of its own, no node, as PyTorch's
    rng = np.random.default_rng(5)
    cache, new = rng.standard_normal((1, 4, 7, 16)).astype(np.float32), rng.standard_normal((1, 4, 1, 16))
    new = new.astype(np.float32)
    for grad in (False, True):
        g = [mg.tensor(cache, requires_grad=grad), mg.tensor(new, requires_grad=grad)]
        w = [torch.tensor(cache, requires_grad=grad), torch.tensor(new, requires_grad=grad)]
        with mg.no_grad(), torch.no_grad():
            got, want = mg.cat(g, dim=2), torch.cat(w, dim=2)
            got3 = mg.cat((g[1][..., :3], g[1], g[0][:, :, :1]), dim=-1)
            want3 = torch.cat((w[1][..., :3], w[1], w[0][:, :, :1]), dim=-1)
        for a, b in ((got, want), (got3, want3)):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.shape == tuple(b.shape) and a.requires_grad == b.requires_grad and a.grad_fn is None
            assert a._version == b._version and a._base is None
        got.add_(1.0)  # its own memory: the inputs stay as they were
        np.testing.assert_array_equal(g[0].detach().numpy(), cache)


@pytest.mark.parametrize("index", [
    (slice(None), [-1]), (slice(None), [0, 2, 0]), (slice(None), [1], slice(None)), ([2, -3],),
    (slice(None), slice(None), [4]), (slice(None), [True, False, True]), (slice(None), [7]),
    (slice(None), [-1], slice(None), slice(None)),
])
def test_full_slices_and_int_list_index_like_torch(index):
    # `logits[:, [-1]]` (full slices, one list of ints) taken without the general conversion: values, dtype,
    # a contiguous copy, the gradient's scatter, and the errors' types (out of range, too many indices) as torch's
    # (out of range: the text names the tensor's dim where PyTorch's names the index's, a known difference)
    a = np.random.default_rng(6).standard_normal((3, 5, 4)).astype(np.float32)
    g, w = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    try:
        want = w[index]
    except (IndexError, RuntimeError) as e:
        with pytest.raises(type(e)):
            g[index]
        return
    got = g[index]
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert got.shape == tuple(want.shape) and got.grad_fn.name() == want.grad_fn.name()
    assert got.is_contiguous() and not np.shares_memory(got.detach().numpy(), a)
    seed = np.arange(got.numel(), dtype=np.float32).reshape(got.shape)
    got.backward(mg.tensor(seed))
    want.backward(torch.tensor(seed))
    np.testing.assert_array_equal(g.grad.numpy(), w.grad.numpy())
    with mg.no_grad():
        np.testing.assert_array_equal(g[index].numpy(), want.detach().numpy())


def test_gradless_ops_outputs_like_torch():
    # comparisons, isnan and argmax outside a capture (array_op's direct path): dtypes, shapes, values as torch's,
    # and a full argmax (numpy's scalar) a 0-d tensor that takes an in-place add
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((1, 65)).astype(np.float32), rng.standard_normal((1, 65)).astype(np.float32)
    a[0, 3] = np.nan
    g, h, w, v = mg.tensor(a), mg.tensor(b), torch.tensor(a), torch.tensor(b)
    pairs = [(g < h, w < v), (g == h, w == v), (mg.isnan(g), torch.isnan(w)), (mg.argmax(h), torch.argmax(v)),
             (mg.argmax(h, dim=-1), torch.argmax(v, dim=-1)), (h.argmax(dim=1, keepdim=True), v.argmax(1, True))]
    for got, want in pairs:
        assert got.dtype == mg.tensor(want.numpy()).dtype and got.shape == tuple(want.shape)
        assert got.grad_fn is None and got._version == 0
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    top, ttop = mg.argmax(h), torch.argmax(v)
    top += 1
    ttop += 1
    assert top.item() == ttop.item() and top.shape == ()


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape, k, dim", [((256, 2000), 10, -1), ((300, 64), 5, 0)])
def test_topk_of_many_rows_like_torch(shape, k, dim, largest):
    # a recommender's top-k items of each user's scores: many rows, each picked by a partition; distinct values
    # (which of equal values comes first is PyTorch's own), so that the indices and gradient are torch's
    rng = np.random.default_rng(3)
    a = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32) / 7
    x, xt = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, want = x.topk(k, dim=dim, largest=largest), xt.topk(k, dim=dim, largest=largest)
    np.testing.assert_array_equal(got.values.detach().numpy(), want.values.detach().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    w = rng.standard_normal(tuple(want.values.shape)).astype(np.float32)
    (got.values * mg.tensor(w)).sum().backward()
    (want.values * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("shape, k, dim", [((1, 65), 10, -1), ((4, 10), 3, -1), ((4, 3000), 7, 1), ((5, 6), 2, 0), ((), 1, 0),
                                           ((256, 200), 10, -1), ((300, 40), 5, 0)])
def test_topk_without_recording_like_recorded_and_torch(shape, k, dim):
    # topk under no_grad (sampling's top-k) skips Function.apply: the recorded op's values and indices, torch's
    # values, a named pair of new tensors with no node
    a = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    if a.ndim:
        a.reshape(-1)[::7] = np.nan
    x = mg.tensor(a, requires_grad=True)
    rec = x.topk(k, dim=dim)
    with mg.no_grad():
        got = x.topk(k, dim=dim)
    want = torch.tensor(a).topk(k, dim=dim)
    assert type(got).__name__ == "topk" and got.values.grad_fn is None and got.indices.dtype == mg.int64
    np.testing.assert_array_equal(got.indices.numpy(), rec.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), rec.values.detach().numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    # contiguous as torch's (a script's `indices.view(-1)`)
    assert got.indices.is_contiguous() and got.values.is_contiguous()
    assert got.indices.view(-1).shape == want.indices.view(-1).shape
    got.values.add_(1.0)
    np.testing.assert_array_equal(x.detach().numpy(), a)


@pytest.mark.parametrize("make", [
    lambda L, i: (slice(None), i, Ellipsis, i),  # an Ellipsis of no dims between the index tensors
    lambda L, i: (None, slice(None), i, Ellipsis, i),
    lambda L, i: (None, i, 0, Ellipsis, i),  # (an int between them too: taken first)
    lambda L, i: (i, Ellipsis, i, slice(None)),
    lambda L, i: (1, True),  # an int, then a 0-d mask (the gradient's write goes through a 0-d view)
])
def test_advanced_index_dims_stay_in_place_across_an_empty_ellipsis_like_torch(make):
    # numpy counts `...` as standing between two index arrays even where it takes no dims and moves the indexed
    # dims to the front; PyTorch keeps them where they are
    x = np.random.default_rng(3).standard_normal((3, 4, 2))
    got, want = run_both(lambda L, t: t[make(L, L.tensor([1, 0]))], [x])
    assert_same(got, want)


@pytest.mark.parametrize("index,value_shape", [
    ((1, 3, slice(None)), (1, 1, 2)), (0, (1, 4, 2)), ((), (1,)), ((), (1, 1)), (([0, 1],), (1, 2, 4, 2)),
])
def test_setitem_value_with_leading_ones_like_torch(index, value_shape):
    # PyTorch drops a value's leading dims of 1 (`buf[i] = row.unsqueeze(0)`); its gradient keeps them
    x = np.random.default_rng(4).standard_normal((2, 4, 2)[:3 if index != () else 0])
    v = np.random.default_rng(5).standard_normal(value_shape)

    def f(L, t, u):
        y = t * 1
        y[index] = u
        return y

    got, want = run_both(f, [x, v])
    assert_same(got, want)


def test_clamp_tensor_bounds_dtype_ties_and_gradients_as_torch():
    # tensor bounds promote with the input all at once; a tie passes the gradient to the input, min > max to max
    nan = float("nan")
    x, lo, hi = [0., 1., 2., 3., nan, 5., 1., 3.], [0., 2., 1., nan, 0., 6., 1., 6.], [1., 3., 2., 2., 1., 4., 1., 4.]
    for bounds in ((0, 1, 2), (0, 1, None), (0, None, 2)):
        res = {}
        for L in (mg, torch):
            ts = [L.tensor(v, requires_grad=True) for v in (x, lo, hi)]
            args = [ts[b] if b is not None else None for b in bounds]
            y = L.clamp(*args)
            y.backward(L.arange(1., 9.))
            res[L] = [y.detach().numpy()] + [t.grad.numpy() for t in args if t is not None]
        for a, b in zip(res[mg], res[torch]):
            np.testing.assert_array_equal(a, b)
    for make in (lambda L: L.clamp(L.tensor([5, -5, -1]), L.tensor([-1.5]), L.tensor(5, dtype=L.int8)),
                 lambda L: L.clamp(L.tensor(1.5, dtype=L.float16), L.tensor([1, 2], dtype=L.int32), L.tensor(1.7, dtype=L.float64)),
                 lambda L: L.clamp(L.tensor([5, -5, -1]), -1.5, L.tensor(5, dtype=L.int8)),  # (a 0-dim bound is a number)
                 lambda L: L.clamp(L.tensor(-4, dtype=L.int32), True, L.tensor(-3)),
                 lambda L: L.clamp(L.tensor(-2, dtype=L.int8), L.tensor(6, dtype=L.uint8), 0)):
        got, want = make(mg), make(torch)
        assert str(got.dtype) == str(want.dtype).replace("torch", "minigrad")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for L in (mg, torch):  # a dimensioned tensor bound with a number: no overload takes it
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            L.clamp(L.tensor([1., 5.]), L.tensor([2., 2.]), 3.5)


@pytest.mark.parametrize("op", ["div", "true_divide", "atan2", "xlogy", "copysign", "__truediv__", "__rtruediv__"])
def test_int_operands_of_float_result_ops_are_not_wrapped_first(op):
    # an integer result promoted to float: each operand from its own values (a 0-dim int64 -4 or 256 beside a
    # uint8 tensor, 300 beside an int8 one), never wrapped into the promoted integer dtype first
    for a, adt, b, bdt in (([1, 5], "uint8", -4, "int32"), ([1, 5], "uint8", 256, "int64"), ([1, -5], "int8", 300, "int64"),
                           ([3, 2], "int16", 70000, "int64"), ([True, False], "bool", 3, "int8")):
        res = []
        for L in (mg, torch):
            x, y = L.tensor(a, dtype=getattr(L, adt)), L.tensor(b, dtype=getattr(L, bdt))
            out = getattr(x, op)(y) if op.startswith("__") else getattr(L, op)(x, y)
            res.append((str(out.dtype).split(".")[1], out.numpy()))
        assert res[0][0] == res[1][0]
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)
    for L in (mg, torch):  # (a Python number likewise)
        res.append((L.tensor([1, -5], dtype=L.int8) / 300).numpy())
    np.testing.assert_allclose(res[-2], res[-1], rtol=1e-6)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_of_all_shares_the_gradient_among_ties_as_torch(op):
    # median() with no dim: PyTorch shares the gradient evenly among the elements equal to the median (the NaNs
    # for a NaN median), never all of it to the element a sort picked
    nan = float("nan")
    for v in ([-3.0, 0.0, -3.0], [[-0.0, -2.0, 0.0], [0.0, -2.0, -2.0]], [1., nan, 2., nan], [nan, nan], [5.], [2., 1., 2., 1.]):
        res = []
        for L in (mg, torch):
            x = L.tensor(v, dtype=L.float64, requires_grad=True)
            y = getattr(L, op)(x)
            y.backward(L.tensor(3.0, dtype=L.float64))
            res.append((y.detach().numpy(), y.grad_fn.name(), x.grad.numpy()))
        np.testing.assert_array_equal(res[0][0], res[1][0])
        assert res[0][1] == res[1][1]
        np.testing.assert_array_equal(res[0][2], res[1][2])


def test_nanmean_dtype_is_the_results_and_integers_are_refused_as_torch():
    for L in (mg, torch):
        x = L.tensor([[1., float("nan"), 2.]], dtype=L.float64)
        assert L.nanmean(x, dim=1, dtype=L.float32).dtype == L.float32
        assert L.nanmean(x, dtype=L.float32).dtype == L.float32
        with pytest.raises(RuntimeError, match="expected input to have floating point or complex dtype but got Short"):
            L.nanmean(L.tensor([1, 2], dtype=L.int16))
        with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype. Got: Char"):
            L.nanmean(x, dtype=L.int8)


@pytest.mark.parametrize("make", [
    lambda t: t.reshape(2, 3).t().as_strided((3,), (1,)),  # a transposed view: its storage's order, not its own
    lambda t: t[2:].as_strided((2,), (1,), 0),  # storage_offset counts from the storage's start
    lambda t: t[2:].as_strided((2,), (1,)),  # and defaults to the input's own
    lambda t: t[1:].as_strided((2, 2), (1, 1), 0),  # overlapping: repeats' gradients summed; t[0] gets none
    lambda t: t[:3].expand(2, 3).as_strided((2,), (1,)),  # an overlapping input: its gradient shared out
    lambda t: (t * 2)[::2].as_strided((2, 2), (2, 1), 1),
])
def test_as_strided_indexes_the_storage_like_torch(make):
    # as_strided reads the memory its input views (PyTorch's storage), not the input's own elements in order
    x = np.random.default_rng(6).standard_normal(6)
    got, want = run_both(lambda L, t: make(t), [x])
    assert_same(got, want)


def test_as_strided_is_a_view_of_the_storage_like_torch():
    for L in (mg, torch):
        b = L.arange(6.)
        v = b.reshape(2, 3).t().as_strided((2, 2), (3, 1), 1)
        assert v._is_view() and v._base is b
        v[0, 0] = 10
        assert b.tolist() == [0, 10, 2, 3, 4, 5]
        assert v.storage_offset() == 1 and v.stride() == (3, 1)


@pytest.mark.parametrize("args", [((7,), (1,)), ((2,), (-1,)), ((2,), (1,), -1), ((2,), (1,), 5)])
def test_as_strided_errors_like_torch(args):
    msgs = []
    for L in (mg, torch):
        with pytest.raises(RuntimeError) as e:
            L.arange(6.).as_strided(*args)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("shape,chunks,dim", [((0,), 3, 0), ((0, 1), 2, 0), ((0, 3), 2, 1), ((2, 0), 3, 1)])
def test_chunk_of_an_empty_dim_like_torch(shape, chunks, dim):
    # PyTorch splits an empty dim into `chunks` empty pieces (a split size of 0)
    got = [tuple(p.shape) for p in mg.zeros(*shape).chunk(chunks, dim)]
    assert got == [tuple(p.shape) for p in torch.zeros(*shape).chunk(chunks, dim)]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_setitem_with_a_plain_false_does_nothing_like_torch(shape):
    # PyTorch returns at once for `y[False] = v`: no write, no version bump, no graph, no check of v's shape
    for L in (mg, torch):
        v = L.tensor(2.0, requires_grad=True)
        y = L.zeros(shape, requires_grad=True).clone()
        version = y._version
        y[False] = v
        y[False] = L.ones(5, 7)
        assert y._version == version and type(y.grad_fn).__name__ == "CloneBackward0"
        y.sum().backward()
        assert v.grad is None


def test_hypot_is_numpys_hypot_of_the_promoted_operands_with_torchs_gradient():
    # sqrt(a*a + b*b) overflowed at 1e200, gave NaN for (-inf, nan), squared float32 before promoting to float64;
    # the gradient is a/r, b/r (NaN at r = 0); hypot is a library function: an ulp's tolerance across CPUs
    res = []
    for L in (mg, torch):
        a = L.tensor([0., 3., -float("inf"), 1e200, -2.5], dtype=L.float64, requires_grad=True)
        b = L.tensor([0., 4., float("nan"), 1e200, 1e-300], dtype=L.float64, requires_grad=True)
        r = L.hypot(a, b)
        r.backward(L.tensor([1., 2., 1., 1., 3.], dtype=L.float64))
        f = L.hypot(L.tensor([1e30, 3e-30]), L.tensor([1e30, 4e-30], dtype=L.float64))
        res.append((r.detach().numpy(), r.grad_fn.name(), a.grad.numpy(), b.grad.numpy(), f.numpy()))
    for m, t in zip(res[0], res[1]):
        if isinstance(m, str):
            assert m == t
        else:
            np.testing.assert_allclose(m, t, rtol=1e-15, atol=0)
            assert m.dtype == t.dtype


@pytest.mark.parametrize("dt,v", [("uint8", -1), ("uint8", -255), ("uint8", -256), ("uint8", 256), ("int8", -129),
                                  ("int8", 127), ("int16", 40000)])
def test_an_integer_tensors_out_of_range_clamp_bound_is_pytorchs(torch, dt, v):
    # PyTorch converts the bound to the dtype: an unsigned one takes -max..-1 wrapped, others are refused
    for kw in (dict(min=v), dict(max=v), dict(min=v, max=300)):
        out = []
        for L in (mg, torch):
            for f in (lambda x, L=L, kw=kw: L.clamp(x, **kw), lambda x, kw=kw: x.clamp_(**kw)):
                try:
                    r = f(L.tensor([0, 5, 100], dtype=getattr(L, dt)))
                    out.append((r.tolist(), str(r.dtype).split(".")[-1]))
                except Exception as e:
                    out.append((type(e).__name__, str(e)))
        assert out[:2] == out[2:]


def _result_or_error(f):
    try:
        return f()
    except (IndexError, RuntimeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape, index", [
    ((2, 0, 1), (Ellipsis, [0, 1])),  # ids out of range, but no element to fetch: PyTorch checks none
    ((2, 0, 1), ([1, 2], slice(None), [3])),
    ((0, 2), (slice(None), [3])),
    ((2, 0), (slice(None), [3])),  # ids into a dim of size 0: refused in PyTorch's own words
    ((3, 0), ([5], [7])),
    ((2, 0, 1), (5, slice(None), [3])),  # an integer is checked
])
def test_out_of_range_ids_into_an_empty_tensor_like_torch(shape, index):
    def go(lib):
        idx = tuple(lib.tensor(i) if isinstance(i, list) else i for i in index)
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        got = _result_or_error(lambda: x[idx])
        if not isinstance(got, tuple):
            got.sum().backward()
            got = (list(got.shape), list(x.grad.shape))
        y = lib.zeros(shape, dtype=lib.float64)
        wrote = _result_or_error(lambda: (y.__setitem__(idx, 1.0), list(y.shape))[1])
        bad = _result_or_error(lambda: (y.__setitem__(idx, lib.ones(3, dtype=lib.float64)), 0)[1])
        return got, wrote, bad

    assert go(mg) == go(torch)


@pytest.mark.parametrize("shape", [(0, 1), (1, 1), (3, 1)])
def test_inplace_through_an_empty_slice_of_a_slice_like_torch(shape):
    def go(lib):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        y = x * 2
        s = y[1:][::2]
        s.mul_(-1)
        (y.sum() + (s * 3).sum()).backward()
        return y.tolist(), x.grad.tolist(), list(s.shape), y._version, s._version

    assert go(mg) == go(torch)


def test_empty_diagonal_is_a_view_like_torch():
    def go(lib):
        x = lib.ones(2, 2, 1, dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = y.diagonal(1, 0, -1)
        v.mul_(3)
        y.add_(1)
        (y * 2).sum().backward()
        return list(v.shape), v._is_view(), v._base is y, y._version, v._version, x.grad.tolist()

    assert go(mg) == go(torch)


@pytest.mark.parametrize("x,g,dim", [
    ([[-float("inf")], [-3.], [float("nan")]], [[1.], [2.], [-2.]], 1),  # a dim of size 1: g itself
    ([2., float("nan"), 3., 0., 5.], [1., 1., 1., 1., 1.], 0),  # after the first zero: 0, NaN or not
    ([[2., 0., float("inf"), 0., 4.], [0., 3., 0.5, float("nan"), 2.]], [[1., 2., 3., 4., 5.], [1., -1., 2., 0., 3.]], 1),
    ([[0., 2.], [float("inf"), 0.], [3., -1.]], [[1., 2.], [3., 4.], [5., 6.]], 0),
])
def test_cumprod_gradient_with_zeros_nans_and_infs_is_pytorchs(torch, x, g, dim):
    # PyTorch's steps: g unchanged along a dim of size 1; with a zero, reversed sums / a before the first zero,
    # the products without it at the first zero, exactly 0 after it
    res = []
    for L in (mg, torch):
        t = L.tensor(x, dtype=L.float64, requires_grad=True)
        L.cumprod(t, dim).backward(L.tensor(g, dtype=L.float64))
        res.append(t.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-15, atol=0)


def test_pow_false_takes_the_formula_and_nextafter_has_pytorchs_node(torch):
    # x ** False is not x ** 0 to PyTorch's backward: 0 * x^-1 (NaN at 0 and NaN); nextafter passes g to
    # input, zeros to other
    res = []
    for L in (mg, torch):
        out = []
        for v in (0., float("nan"), 2.):
            x = L.tensor(v, requires_grad=True)
            (x ** False).backward()
            out.append(x.grad.item())
        a = L.tensor([1., 2.], requires_grad=True)
        b = L.tensor([[3.], [0.]], requires_grad=True)
        r = L.nextafter(a, b)
        r.backward(L.tensor([[1., 2.], [3., 4.]]))
        out += [r.grad_fn.name(), a.grad.tolist(), b.grad.tolist()]
        res.append(out)
    np.testing.assert_equal(res[0], res[1])


def test_floor_divide_records_no_derivative_as_pytorch(torch):
    # floor_divide, `//` and `2 // t` have a NotImplemented node (div(rounding_mode="floor")'s gradient is 0)
    res = []
    for L in (mg, torch):
        a = L.tensor([5., 3.], requires_grad=True)
        for r in (L.floor_divide(a, L.tensor([2., 2.])), a // 2, 2 // a):
            try:
                r.sum().backward()
                res.append(("ok", a.grad.tolist()))
            except RuntimeError as e:
                res.append((type(r.grad_fn).__name__, r.requires_grad, str(e)))
        r = L.div(a, 2, rounding_mode="floor")
        r.sum().backward()
        res.append((r.grad_fn.name(), a.grad.tolist()))
    assert res[:4] == res[4:]


@pytest.mark.parametrize("a,b", [("float32", "float64"), ("float16", "float32"), ("float32", "complex64"),
                                 ("float64", "int64")])
def test_lerp_dtype_mismatch_names_the_dtypes_as_pytorch(torch, a, b):
    # PyTorch's message names C++ types ("float", "c10::Half", "long int"), not Python ones
    out = []
    for L in (mg, torch):
        A, B = getattr(L, a), getattr(L, b)
        with pytest.raises(RuntimeError) as e:
            L.ones(2, dtype=A).lerp_(L.ones(2, dtype=B), 0.5)
        out.append(str(e.value))
        with pytest.raises(RuntimeError) as e:
            L.lerp(L.ones(2, dtype=A), L.ones(2, dtype=A), L.ones(2, dtype=B))
        out.append(str(e.value))
    assert out[:2] == out[2:]


_MIXED_INTEGER_WRITES = {
    # mixed integers in place: PyTorch casts any integer result into self's integer dtype (wrapping)
    "uint8_or_int32": "L.tensor([1, 2], dtype=L.uint8).bitwise_or_(L.tensor([1, 256], dtype=L.int32))",
    "uint8_and_int64": "L.tensor([1, 2], dtype=L.uint8).bitwise_and_(L.tensor([1, -1]))",
    "uint8_shift_int32": "L.tensor([1, 2], dtype=L.uint8).bitwise_left_shift_(L.tensor([1, 2], dtype=L.int32))",
    "int32_or_uint8": "L.tensor([1, 2], dtype=L.int32).bitwise_or_(L.tensor([1, 255], dtype=L.uint8))",
}


@pytest.mark.parametrize("case", sorted(_MIXED_INTEGER_WRITES))
def test_mixed_integer_in_place_bitwise_is_pytorchs(case):
    out = []
    for L in (mg, torch):
        r = eval(_MIXED_INTEGER_WRITES[case], {"L": L})
        out.append((r.tolist(), str(r.dtype).split(".")[-1], tuple(r.shape)))
    assert out[0] == out[1]
