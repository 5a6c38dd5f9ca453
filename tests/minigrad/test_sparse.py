"""COO sparse tensors (minigrad/sparse.py) against PyTorch's: what graph scripts do with an adjacency
matrix (pygcn's torch.sparse.mm(adj, x)), their values, gradients and error texts."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

ROWS = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) twice: an uncoalesced tensor
VALS = np.array([3.0, 4.0, 5.0, 1.0, -2.0], dtype=np.float32)


def both(values=VALS, size=(3, 3)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's one-time note about its invariant checks
        t = torch.sparse_coo_tensor(torch.from_numpy(ROWS), torch.from_numpy(values), size)
    return minigrad.sparse_coo_tensor(minigrad.tensor(ROWS), minigrad.tensor(values), size), t


def test_coalesce_to_dense_indices_values_as_pytorch():
    m, t = both()
    assert m.is_sparse and not m.is_coalesced() and m._nnz() == t._nnz() == 5
    np.testing.assert_array_equal(m.to_dense().numpy(), t.to_dense().numpy())
    mc, tc = m.coalesce(), t.coalesce()
    assert mc.is_coalesced() and mc._nnz() == tc._nnz()
    np.testing.assert_array_equal(mc.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(mc.values().numpy(), tc.values().numpy())
    assert list(mc.t().to_dense().shape) == list(tc.t().to_dense().shape)
    np.testing.assert_array_equal(m.t().to_dense().numpy(), t.t().to_dense().numpy())
    assert repr(mc).replace("minigrad.", "torch.") == repr(tc)


def test_size_inferred_and_hybrid_values():
    v = np.arange(10, dtype=np.float32).reshape(5, 2)
    m = minigrad.sparse_coo_tensor(minigrad.tensor(ROWS), minigrad.tensor(v))
    t = torch.sparse_coo_tensor(torch.from_numpy(ROWS), torch.from_numpy(v))
    assert tuple(m.shape) == tuple(t.shape) and m.dense_dim() == t.dense_dim() == 1
    np.testing.assert_array_equal(m.to_dense().numpy(), t.to_dense().numpy())
    np.testing.assert_array_equal(m.coalesce().values().numpy(), t.coalesce().values().numpy())


PRODUCTS = {"sparse.mm": lambda lib, s, d: lib.sparse.mm(s, d), "spmm": lambda lib, s, d: lib.spmm(s, d),
            "mm": lambda lib, s, d: lib.mm(s, d), "matmul": lambda lib, s, d: lib.matmul(s, d),
            "@": lambda lib, s, d: s @ d, "method": lambda lib, s, d: s.mm(d)}


@pytest.mark.parametrize("form", PRODUCTS)
def test_sparse_mm_values_and_gradients(form):
    rng = np.random.default_rng(0)
    vals = rng.standard_normal(5).astype(np.float32)
    dense = rng.standard_normal((3, 4)).astype(np.float32)
    out = {}
    for lib in (minigrad, torch):
        v = lib.tensor(vals, requires_grad=True)
        d = lib.tensor(dense, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(ROWS), v * 2, (3, 3))
        y = PRODUCTS[form](lib, s, d)
        (y * y).sum().backward()
        out[lib] = y.detach().numpy(), v.grad.numpy(), d.grad.numpy()
    for a, b in zip(out[minigrad], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_sparse_leaf_gradient_is_sparse():
    m, t = (s.coalesce() for s in both())
    d = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    for s, lib in ((m, minigrad), (t, torch)):
        s.requires_grad_()
        lib.sparse.mm(s, lib.tensor(d)).sum().backward()
    assert m.grad.is_sparse and t.grad.is_sparse
    np.testing.assert_allclose(m.grad.to_dense().numpy(), t.grad.to_dense().numpy(), rtol=1e-6)


def test_legacy_float_tensor_warns_as_pytorch():
    with pytest.warns(UserWarning) as got:
        m = minigrad.sparse.FloatTensor(minigrad.tensor(ROWS), minigrad.tensor(VALS), minigrad.Size([3, 3]))
    with pytest.warns(UserWarning) as want:
        t = torch.sparse.FloatTensor(torch.from_numpy(ROWS), torch.from_numpy(VALS), torch.Size([3, 3]))
    assert str(want[0].message).startswith(str(got[0].message))
    np.testing.assert_array_equal(m.to_dense().numpy(), t.to_dense().numpy())


def _error(f):
    with pytest.raises(Exception) as e:
        f()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("call", [
    lambda lib, s: s.indices(),
    lambda lib, s: s.values(),
    lambda lib, s: s.numpy(),
    lambda lib, s: s.item(),
    lambda lib, s: lib.sparse.mm(s, lib.ones(2, 2)),
    lambda lib, s: lib.sparse.mm(s, lib.ones(3, 2, dtype=lib.float64)),
    lambda lib, s: lib.sparse_coo_tensor(lib.tensor(ROWS), lib.ones(4)),
    lambda lib, s: lib.sparse_coo_tensor(lib.tensor(ROWS[0]), lib.ones(5)),
])
def test_errors_as_pytorch(call):
    m, t = both()
    assert _error(lambda: call(minigrad, m)) == _error(lambda: call(torch, t))


def test_unsupported_op_raises_pytorchs_not_implemented_error():
    m, t = both()
    kind, text = _error(lambda: m.view(9))
    want_kind, want_text = _error(lambda: t.view(9))
    assert kind is want_kind is NotImplementedError and want_text.startswith(text)


@pytest.mark.parametrize("op", [
    lambda lib, s: lib.sum(s),
])
def test_a_dense_op_given_a_sparse_tensor_says_so_in_one_line(op):
    # PyTorch computes these; minigrad's sparse tensors take coalesce, to_dense and sparse @ dense only, and a
    # dense op reading the sparse tensor's array used to fail deep inside ('function' object has no attribute)
    m, _ = both()
    with pytest.raises(NotImplementedError, match=r"^a sparse COO tensor was passed to an op .* \.to_dense\(\) first$"):
        op(minigrad, m)


@pytest.mark.parametrize("n", [1, 2])
def test_item_and_bool_of_a_sparse_tensor_as_pytorch(n):
    ids, vals = np.array([[0, 1][:n]]), np.array([2.5, 3.0][:n], dtype=np.float32)
    m = minigrad.sparse_coo_tensor(minigrad.tensor(ids), minigrad.tensor(vals), (n,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.sparse_coo_tensor(torch.from_numpy(ids), torch.from_numpy(vals), (n,))
    for f in (lambda s: s.item(), bool):
        if n == 1:
            assert f(m) == f(t)
        else:
            assert _error(lambda f=f: f(m)) == _error(lambda f=f: f(t))


ARITHMETIC = {
    "dense + sparse": lambda lib, s, d: d + s, "dense - sparse": lambda lib, s, d: d - s,
    "add(dense, sparse)": lambda lib, s, d: lib.add(d, s), "dense * sparse": lambda lib, s, d: d * s,
    "sparse * dense": lambda lib, s, d: s * d, "sparse * 2": lambda lib, s, d: s * 2,
    "2 * sparse": lambda lib, s, d: 2 * s, "sparse / 2": lambda lib, s, d: s / 2, "-sparse": lambda lib, s, d: -s,
    "sparse + sparse": lambda lib, s, d: s + s, "sparse - sparse": lambda lib, s, d: s - s * 3,
    "dense @ sparse": lambda lib, s, d: d @ s, "mm(dense, sparse)": lambda lib, s, d: lib.mm(d, s),
    "sparse @ sparse": lambda lib, s, d: lib.sparse.mm(s, s), "sparse @ 1-D": lambda lib, s, d: lib.matmul(s, d[0]),
    "sparse.sum": lambda lib, s, d: lib.sparse.sum(s), "sum": lambda lib, s, d: s.sum(),
    "transpose": lambda lib, s, d: s.transpose(0, 1),
    "clone": lambda lib, s, d: s.clone(),
}


@pytest.mark.parametrize("form", ARITHMETIC)
def test_sparse_arithmetic_values_layout_and_gradients_as_pytorch(form):
    rng = np.random.default_rng(2)
    vals = rng.standard_normal(5).astype(np.float32)
    dense = rng.standard_normal((3, 3)).astype(np.float32)
    out = {}
    for lib in (minigrad, torch):
        v = lib.tensor(vals, requires_grad=True)
        d = lib.tensor(dense, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.sparse_coo_tensor(lib.tensor(ROWS), v * 1, (3, 3))
            y = ARITHMETIC[form](lib, s, d)
        sparse = y.is_sparse
        y = y.to_dense() if sparse else y
        (y * y).sum().backward()
        dg = None if d.grad is None else d.grad.to_dense() if d.grad.is_sparse else d.grad  # (torch's: sparse for `*`)
        out[lib] = sparse, tuple(y.shape), y.detach().numpy(), v.grad.numpy(), None if dg is None else dg.numpy()
    (ms, mshape, *mrest), (ts, tshape, *trest) = out[minigrad], out[torch]
    assert (ms, mshape) == (ts, tshape)
    for a, b in zip(mrest, trest):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda lib, s: s + lib.ones(3, 3),
    lambda lib, s: 1 + s,
    lambda lib, s: lib.ones(3, 3) / s,
    lambda lib, s: s / lib.ones(3, 3),
    lambda lib, s: lib.mm(s, lib.ones(3)),
    lambda lib, s: s.to_dense(lib.float64),
    lambda lib, s: lib.sparse_coo_tensor(lib.tensor(ROWS), lib.ones(5), (2, 3), check_invariants=True),
    lambda lib, s: lib.sparse_coo_tensor(-lib.tensor(ROWS), lib.ones(5), (3, 3), check_invariants=True),
])
def test_sparse_arithmetic_errors_as_pytorch(call):
    m, t = both()
    assert _error(lambda: call(minigrad, m)) == _error(lambda: call(torch, t))


def test_tensor_of_a_sparse_tensor_is_a_detached_sparse_copy_with_pytorchs_warning():
    m, t = both()
    m.requires_grad_()
    t.requires_grad_()
    with pytest.warns(UserWarning) as got:
        mc = minigrad.tensor(m)
    with pytest.warns(UserWarning) as want:
        tc = torch.tensor(t)
    assert str(got[-1].message) == str(want[-1].message)
    assert mc.is_sparse and tc.is_sparse and mc is not m and not mc.requires_grad and not tc.requires_grad
    np.testing.assert_array_equal(mc.to_dense().numpy(), tc.to_dense().numpy())
    assert minigrad.as_tensor(m) is m and torch.as_tensor(t) is t


def test_dense_plus_sparse_of_another_shape_raises_pytorchs_error():  # minigrad broadcast it before
    for t in (torch, minigrad):
        s = t.sparse_coo_tensor([[0], [1]], [1.0], (1, 3))
        with pytest.raises(RuntimeError) as e:
            t.ones(2, 3) + s
        if t is torch:
            want = str(e.value)
    assert str(e.value) == want


DENSE = np.array([[[0.0, 1.5], [0.0, 0.0], [2.0, -1.0]], [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]]])  # 2 x 3 x 2


def _same_sparse(m, t):
    assert m.is_sparse == t.is_sparse and tuple(m.shape) == tuple(t.shape) and m.dtype.__repr__().split(".")[-1] == \
        repr(t.dtype).split(".")[-1]
    if t.is_sparse:
        assert (m.sparse_dim(), m.dense_dim(), m.is_coalesced()) == (t.sparse_dim(), t.dense_dim(), t.is_coalesced())
        np.testing.assert_array_equal(m._indices().numpy(), t._indices().numpy())
        np.testing.assert_allclose(m._values().detach().numpy(), t._values().detach().numpy(), rtol=1e-12)
    else:
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    assert (m.grad_fn is None) == (t.grad_fn is None)
    if t.grad_fn is not None:
        assert m.grad_fn.name() == t.grad_fn.name()


def _loss(lib, r):  # a weighted sum, so that each element's gradient differs
    d = r.to_dense() if r.is_sparse else r
    return (d * lib.arange(d.numel(), dtype=d.dtype).reshape(d.shape)).sum()


SPARSE_FORMS = {
    "to_sparse": lambda lib, x: x.to_sparse(),
    "to_sparse_coo": lambda lib, x: x.to_sparse_coo(),
    "to_sparse(1)": lambda lib, x: x.to_sparse(1),
    "to_sparse(2)": lambda lib, x: x.to_sparse(2),
    "sparse.sum": lambda lib, x: lib.sparse.sum(x.to_sparse()),
    "sparse.sum0": lambda lib, x: lib.sparse.sum(x.to_sparse(), 0),
    "sparse.sum(1,2)": lambda lib, x: lib.sparse.sum(x.to_sparse(), (1, 2)),
    "sparse.sum all": lambda lib, x: lib.sparse.sum(x.to_sparse(), (0, 1, 2)),
    "sparse.sum hybrid": lambda lib, x: lib.sparse.sum(x.to_sparse(2), (0, 2)),
    "sparse.sum hybrid sparse dims": lambda lib, x: lib.sparse.sum(x.to_sparse(2), (0, 1)),
    "sparse.sum dtype": lambda lib, x: lib.sparse.sum(x.to_sparse(), 1, dtype=lib.float32),
    "sum all keepdim": lambda lib, x: x.to_sparse().sum((0, 1, 2), keepdim=True),
}


@pytest.mark.parametrize("form", SPARSE_FORMS)
def test_to_sparse_and_sum_values_kinds_and_gradients_as_pytorch(form):
    out = {}
    for lib in (minigrad, torch):
        x = lib.tensor(DENSE, requires_grad=True)
        r = SPARSE_FORMS[form](lib, x)
        _loss(lib, r).backward()
        out[lib] = r, x.grad.numpy()
    _same_sparse(out[minigrad][0], out[torch][0])
    np.testing.assert_allclose(out[minigrad][1], out[torch][1], rtol=1e-12)


def _dense_of(s):  # PyTorch's to_dense: its gradient is the incoming one at the sparse tensor's elements
    return s.to_dense()


def _as(sp, s):
    return s if sp is None else sp(s)


# PyTorch 2.13 computes these, but its backward through them fails (sparse cat's CatBackward0 runs as_strided
# on the sparse gradient; `s.sum(dim)`'s expands it): minigrad's gradients are checked against the same
# function run through PyTorch's to_dense, dense cat and torch.sparse.sum
NO_TORCH_GRAD_FORMS = {
    "cat0": lambda lib, x, sp: lib.cat([_as(sp, x.to_sparse()), _as(sp, (x * 2).to_sparse())]),
    "cat1": lambda lib, x, sp: lib.cat([_as(sp, x.to_sparse()), _as(sp, x[:, :2].to_sparse())], 1),
    "cat-1": lambda lib, x, sp: lib.cat([_as(sp, x.to_sparse()), _as(sp, x.to_sparse())], -1),
    "cat dense dim": lambda lib, x, sp: lib.cat([_as(sp, x.to_sparse(1)), _as(sp, x.to_sparse(1))], 2),
    "cat dense dim1": lambda lib, x, sp: lib.cat([_as(sp, x.to_sparse(1)), _as(sp, x[:, :1].to_sparse(1))], 1),
    "sum(dim)": (lambda lib, x, sp: x.to_sparse().sum(-1) if sp is None else lib.sparse.sum(x.to_sparse(), -1)),
    "sum keepdim": (lambda lib, x, sp: x.to_sparse().sum(1, keepdim=True) if sp is None
                    else lib.sparse.sum(x.to_sparse(), 1).to_dense().unsqueeze(1)),
}


@pytest.mark.parametrize("form", NO_TORCH_GRAD_FORMS)
def test_sparse_cat_and_sum_dim_values_as_pytorch_and_gradients_as_the_dense_math(form):
    f = NO_TORCH_GRAD_FORMS[form]
    x = minigrad.tensor(DENSE, requires_grad=True)
    r = f(minigrad, x, None)
    _loss(minigrad, r).backward()
    _same_sparse(r, f(torch, torch.tensor(DENSE, requires_grad=True), None))
    xt = torch.tensor(DENSE, requires_grad=True)
    _loss(torch, f(torch, xt, _dense_of)).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_sum_of_values_given_as_a_leaf_reaches_them_as_pytorch():
    out = {}
    for lib in (minigrad, torch):
        v = lib.tensor(VALS.astype(np.float64).reshape(5, 1) * [1.0, -2.0], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(ROWS), v, (3, 3, 2))  # uncoalesced: repeats add up
        r = lib.sparse.sum(s, (1, 2))
        _loss(lib, r).backward()
        out[lib] = r, v.grad.numpy()
    _same_sparse(out[minigrad][0], out[torch][0])
    np.testing.assert_allclose(out[minigrad][1], out[torch][1], rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib, s, x: lib.cat([s, x]),
    lambda lib, s, x: lib.cat([s, x.to_sparse(1)]),
    lambda lib, s, x: lib.cat([s, x[:1, :2].to_sparse()], 1),
    lambda lib, s, x: lib.cat([s, s], 3),
    lambda lib, s, x: lib.sparse.sum(s, 3),
    lambda lib, s, x: lib.sparse.sum(s, (0, -3)),
    lambda lib, s, x: x.to_sparse(4),
    lambda lib, s, x: x.to_sparse(0),
    lambda lib, s, x: s.to_sparse(1),
    lambda lib, s, x: x.to_sparse(blocksize=(1, 1)),
])
def test_to_sparse_cat_and_sum_errors_as_pytorch(call):
    got = {}
    for lib in (minigrad, torch):
        x = lib.tensor(DENSE)
        got[lib] = _error(lambda lib=lib, x=x: call(lib, x.to_sparse(), x))
    assert got[minigrad] == got[torch]


def test_cat_of_dense_then_sparse_raises_pytorchs_backend_error():
    m, t = both()
    kind, text = _error(lambda: minigrad.cat([minigrad.ones(3, 3), m]))
    want_kind, want_text = _error(lambda: torch.cat([torch.ones(3, 3), t]))
    assert kind is want_kind is NotImplementedError and want_text.startswith(text)


def test_to_sparse_of_a_sparse_tensor_is_itself_as_pytorch():
    m, t = both()
    assert m.to_sparse() is m and t.to_sparse() is t


@pytest.mark.parametrize("shape, sparse_dim", [((0, 3), None), ((3, 0), None), ((0, 3), 1), ((3, 0), 1)])
def test_to_sparse_of_an_empty_tensor_has_no_elements_as_pytorch(shape, sparse_dim):
    s = minigrad.zeros(*shape).to_sparse(sparse_dim)
    k = len(shape) if sparse_dim is None else sparse_dim
    assert s._nnz() == 0 and tuple(s.shape) == shape
    assert tuple(s.indices().shape) == (k, 0) and tuple(s.values().shape) == (0,) + shape[k:]
    assert s.to_dense().shape == shape
