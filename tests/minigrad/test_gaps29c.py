"""PyTorch 2.13's answers where minigrad differed: narrow's and add's parser texts, the linalg *_ex info codes,
and the elementwise ops and indexing of sparse COO tensors."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _error(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def _same_error(fn):
    _same_text(_error(fn, minigrad), _error(fn, torch))


def _same_text(mine, theirs):
    (kind, text), (want_kind, want_text) = mine, theirs
    assert kind == want_kind
    if kind == "NotImplementedError":  # (PyTorch's dispatcher goes on to list its backends)
        assert want_text.startswith(text) and text.endswith("(if using custom build).")
    else:
        assert text == want_text


# ---- parser texts ----------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.ones(4).narrow(0, 1.0, 2),
    lambda L: L.narrow(L.ones(4), 0, 1.0, 2),
    lambda L: L.ones(4).narrow(0, 1, 2.0),
    lambda L: L.ones(4).narrow(0.0, 1, 2),
    lambda L: L.ones(4).narrow(0, None, 2),
    lambda L: L.ones(4).narrow(0, L.tensor(1.0), 2),
    lambda L: L.ones(4).narrow(0, 1, L.tensor(2.0)),
], ids=["start_float", "function", "length_float", "dim_float", "start_none", "start_float_tensor",
        "length_float_tensor"])
def test_narrow_bad_argument_text(call):
    _same_error(call)


def test_narrow_takes_integral_arguments_of_other_kinds():
    for L in (minigrad, torch):
        t = L.arange(5.0)
        assert t.narrow(L.tensor(0), np.int64(1), L.tensor(2)).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).add([1.0, 2.0]),
    lambda L: L.add(L.ones(2), [1.0, 2.0]),
    lambda L: L.ones(2).add(None),
    lambda L: L.ones(2).add("a", alpha=2),
    lambda L: L.ones(2).sub((1, 2)),
    lambda L: L.sub(L.ones(2), [1]),
    lambda L: L.ones(2) + [1.0, 2.0],
    lambda L: L.ones(2) - None,
], ids=["method", "function", "none", "alpha", "sub_method", "sub_function", "operator", "sub_operator"])
def test_add_of_a_non_tensor_text(call):
    _same_error(call)


# ---- linalg *_ex of a singular matrix: LAPACK's info and what its solve leaves --------------------------
_SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]  # (its LU's third pivot is zero)


def _same_pattern(mine, theirs):
    """The same shape, dtype, inf and nan places (what a zero pivot makes of LAPACK's triangular solve), and the
    same finite values."""
    a, b = mine.numpy(), theirs.numpy()
    assert a.shape == b.shape and str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b))
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b))
    np.testing.assert_allclose(a[np.isfinite(b)], b[np.isfinite(b)], rtol=1e-5)


@pytest.mark.parametrize("a, b", [(_SINGULAR, [[1.0], [1.0], [1.0]]), ([[0.0, 0.0], [0.0, 0.0]], [1.0, 1.0]),
                                  ([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[1.0], [2.0]]] * 2)],
                         ids=["singular", "zero_vector", "batch"])
def test_solve_ex_of_a_singular_matrix(a, b):
    (x, info), (tx, tinfo) = (L.linalg.solve_ex(L.tensor(a), L.tensor(b)) for L in (minigrad, torch))
    assert info.tolist() == tinfo.tolist() and str(info.dtype) == "minigrad.int32"
    _same_pattern(x, tx)
    assert np.isinf(x.numpy()).any()  # (the zero pivot's row: a nonzero divided by it)


def test_solve_ex_of_a_singular_matrix_from_the_right():
    a, b = _SINGULAR, [[1.0, 1.0, 1.0]]
    (x, info), (tx, tinfo) = (L.linalg.solve_ex(L.tensor(a), L.tensor(b), left=False) for L in (minigrad, torch))
    assert info.tolist() == tinfo.tolist()
    _same_pattern(x, tx)


def test_inv_ex_of_a_singular_matrix():
    (x, info), (tx, tinfo) = (L.linalg.inv_ex(L.tensor(_SINGULAR, dtype=L.float64)) for L in (minigrad, torch))
    assert info.tolist() == tinfo.tolist() == 3
    _same_pattern(x, tx)


def test_inv_ex_keeps_the_gradient_of_the_invertible_batch_elements():
    a = [[[2.0, 1.0], [1.0, 3.0]], [[0.0, 0.0], [0.0, 0.0]]]
    grads = []
    for L in (minigrad, torch):
        A = L.tensor(a, requires_grad=True)
        inverse, info = L.linalg.inv_ex(A)
        inverse[0].sum().backward()
        grads.append(A.grad[0].tolist())
        assert info.tolist() == [0, 1]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


# ---- sparse COO: elementwise ops and indexing ------------------------------------------------------------
_INDICES, _VALUES, _SIZE = [[0, 1, 1, 0], [2, 0, 2, 2]], [0.5, -1.5, 2.0, 0.25], (2, 3)  # (0, 2) twice: uncoalesced


def _sparse(L, values=_VALUES, coalesce=False, **kw):
    s = L.sparse_coo_tensor(L.tensor(_INDICES), L.tensor(values, **kw), _SIZE)
    return s.coalesce() if coalesce else s


def _same_sparse(mine, theirs):
    assert mine.is_sparse and theirs.is_sparse
    assert mine.is_coalesced() == theirs.is_coalesced()
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] and tuple(mine.shape) == tuple(theirs.shape)
    assert mine._indices().tolist() == theirs._indices().tolist()
    np.testing.assert_allclose(mine._values().detach().numpy(), theirs._values().detach().numpy(), rtol=1e-6,
                               equal_nan=True)


_UNARY = ["neg", "negative", "positive", "conj_physical", "abs", "absolute", "sqrt", "sin", "tan", "tanh", "asin",
          "arcsin", "atan", "arctan", "sinh", "asinh", "arcsinh", "atanh", "arctanh", "expm1", "log1p", "sign", "sgn",
          "ceil", "floor", "round", "trunc", "fix", "frac", "relu", "square", "deg2rad", "rad2deg", "erf", "erfinv",
          "nan_to_num", "isnan", "isinf", "isposinf", "isneginf", "signbit"]


@pytest.mark.parametrize("name", _UNARY)
def test_sparse_elementwise_op(name):
    _same_sparse(getattr(_sparse(minigrad), name)(), getattr(_sparse(torch), name)())
    _same_sparse(getattr(minigrad, name)(_sparse(minigrad)), getattr(torch, name)(_sparse(torch)))


@pytest.mark.parametrize("name", _UNARY)
def test_sparse_elementwise_op_in_place(name):
    for coalesce in (False, True):
        results = []
        for L in (minigrad, torch):
            s = _sparse(L, coalesce=coalesce)
            try:
                out = getattr(s, name + "_")()
            except (RuntimeError, NotImplementedError, AttributeError) as e:
                results.append((type(e).__name__, str(e)))
                continue
            assert out is s
            results.append(s)
        if isinstance(results[1], tuple):
            _same_text(*results)
        else:
            _same_sparse(*results)


def test_sparse_elementwise_gradient_reaches_the_values():
    grads = []
    for L in (minigrad, torch):
        v = L.tensor(_VALUES, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(_INDICES), v, _SIZE)
        out = L.log1p(s.abs()).square().relu().neg()  # (ops whose backward PyTorch runs on sparse too)
        assert out.grad_fn.name() == "NegBackward0"
        out.to_dense().sum().backward()
        grads.append(v.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: _sparse(L).round(decimals=1), lambda L: _sparse(L).exp(), lambda L: _sparse(L).isfinite(),
    lambda L: _sparse(L).logical_not(), lambda L: _sparse(L, coalesce=True).square_(),
    lambda L: _sparse(L).sqrt_(), lambda L: _sparse(L).arcsin_(), lambda L: _sparse(L).fix_(),
    lambda L: _sparse(L).isnan_(),
], ids=["round_decimals", "exp", "isfinite", "logical_not", "square_", "sqrt_", "arcsin_", "fix_", "isnan_"])
def test_sparse_elementwise_refusals(call):
    _same_error(call)


@pytest.mark.parametrize("coalesce", [False, True])
def test_sparse_times_sparse_is_the_intersection(coalesce):
    out = []
    for L in (minigrad, torch):
        a = _sparse(L, coalesce=coalesce, requires_grad=True)
        b = L.sparse_coo_tensor(L.tensor([[1, 0], [2, 2]]), L.tensor([3.0, 4.0]), _SIZE)
        b = b.coalesce() if coalesce else b
        product = a * b
        assert product.is_sparse and product.is_coalesced() == coalesce
        out.append(product)
    np.testing.assert_allclose(out[0].to_dense().detach().numpy(), out[1].to_dense().detach().numpy())
    if coalesce:
        _same_sparse(*out)


def test_sparse_times_sparse_of_other_sizes():
    _same_error(lambda L: _sparse(L) * L.sparse_coo_tensor(L.tensor([[0], [0]]), L.ones(1), (3, 3)))


def test_sparse_times_a_broadcast_dense():
    _same_sparse(_sparse(minigrad) * minigrad.tensor([1.0, 2.0, 3.0]), _sparse(torch) * torch.tensor([1.0, 2.0, 3.0]))
    _same_error(lambda L: _sparse(L) * L.ones(3, 3))


@pytest.mark.parametrize("key", [0, -1, (0, 2), (slice(None), 1), (Ellipsis, 2), (1, slice(None)), (None, 0)],
                         ids=["int", "negative", "element", "column", "ellipsis", "row_then_all", "none"])
def test_sparse_indexing(key):
    for coalesce in (False, True):
        mine, theirs = _sparse(minigrad, coalesce=coalesce)[key], _sparse(torch, coalesce=coalesce)[key]
        if theirs.is_sparse:
            _same_sparse(mine, theirs)
        else:
            assert not getattr(mine, "is_sparse", False) and mine.tolist() == theirs.tolist()


@pytest.mark.parametrize("call", [
    lambda L: _sparse(L)[5], lambda L: _sparse(L)[:, 3], lambda L: _sparse(L)[1:],
    lambda L: _sparse(L)[L.tensor([0])], lambda L: _sparse(L).select(1, 7), lambda L: _sparse(L).select(0, -3),
    lambda L: _sparse(L).narrow(1, 1, 2), lambda L: _sparse(L).narrow(1, 2, 2), lambda L: _sparse(L).narrow_copy(1, 2, 2),
    lambda L: _sparse(L).narrow_copy(1, -1, 1), lambda L: _sparse(L).narrow_copy(1, 0, -1),
], ids=["int_oob", "column_oob", "slice", "tensor", "select_oob", "select_negative_oob", "narrow", "narrow_oob",
        "narrow_copy_oob", "narrow_copy_negative_start", "narrow_copy_negative_length"])
def test_sparse_indexing_refusals(call):
    _same_error(call)


@pytest.mark.parametrize("args", [(0, 1), (1, 2), (0, -1)])
def test_sparse_select(args):
    for coalesce in (False, True):
        _same_sparse(_sparse(minigrad, coalesce=coalesce).select(*args), _sparse(torch, coalesce=coalesce).select(*args))


def test_sparse_select_of_a_hybrid_tensor():
    for L in (minigrad, torch):
        h = L.sparse_coo_tensor(L.tensor([[0, 1, 0]]), L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (2, 2))
        if L is minigrad:
            mine = (h.select(1, 0), h.select(0, 0))
        else:
            theirs = (h.select(1, 0), h.select(0, 0))
    _same_sparse(mine[0], theirs[0])
    assert mine[1].tolist() == theirs[1].tolist() == [6.0, 8.0]


@pytest.mark.parametrize("args", [(0, 0, 1), (1, 1, 2), (0, 1, 1), (1, 0, 0)])
def test_sparse_narrow_copy(args):
    for coalesce in (False, True):
        _same_sparse(_sparse(minigrad, coalesce=coalesce).narrow_copy(*args),
                     _sparse(torch, coalesce=coalesce).narrow_copy(*args))


def test_sparse_select_keeps_the_gradient():
    # (PyTorch has no sparse select_backward: its dense form of the same tensor gives the gradient)
    v = minigrad.tensor(_VALUES, requires_grad=True)
    s = minigrad.sparse_coo_tensor(minigrad.tensor(_INDICES), v, _SIZE)
    (s.select(1, 2).to_dense() * minigrad.tensor([1.0, 2.0])).sum().backward()
    tv = torch.tensor(_VALUES, requires_grad=True)
    dense = torch.zeros(_SIZE).index_put(tuple(torch.tensor(_INDICES)), tv, accumulate=True)
    (dense.select(1, 2) * torch.tensor([1.0, 2.0])).sum().backward()
    assert v.grad.tolist() == tv.grad.tolist()
