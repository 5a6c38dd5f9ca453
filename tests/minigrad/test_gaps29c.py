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
    assert _error(fn, minigrad) == _error(fn, torch)


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
