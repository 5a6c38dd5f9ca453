"""Index ops and getitem errors made PyTorch's: masked_scatter's node, take's and take_along_dim's checks,
index_copy's node, and the IndexError of several advanced indices out of range."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def run(L, fn):
    """(result, None) or (None, (exception type name, message))."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(L), None
    except (IndexError, RuntimeError, TypeError) as e:
        return None, (type(e).__name__, str(e).replace("torch.", "minigrad."))


def same(fn):
    (g, g_err), (w, w_err) = run(mg, fn), run(torch, fn)
    assert g_err == w_err
    return g, w


def grads(L, op, x_shape, s_shape, mask):
    x = L.tensor(np.arange(np.prod(x_shape), dtype=np.float64).reshape(x_shape) + 1, requires_grad=True)
    s = L.tensor(-np.arange(np.prod(s_shape), dtype=np.float64).reshape(s_shape) - 1, requires_grad=True)
    out = op(x.clone() if op is not L.masked_scatter else x, L.tensor(mask), s)
    w = L.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) * 0.5 + 1)
    (out * w).sum().backward()
    return out, type(out.grad_fn).__name__, x.grad, s.grad


@pytest.mark.parametrize("form", ["masked_scatter_", "masked_scatter"])
@pytest.mark.parametrize("x_shape,s_shape,mask", [
    ((2, 3), (7,), np.array([True, False, True])),  # a broadcast mask; source longer than needed
    ((2, 3), (2, 3), np.array([[True, False, True], [False, True, True]])),
    ((3,), (2, 4), np.array([[True, False, True], [False, False, True]])),  # out of place: self broadcast too
    ((), (1,), np.array(True)),
])
def test_masked_scatter_records_its_node(form, x_shape, s_shape, mask):
    if form == "masked_scatter_" and mask.ndim > len(x_shape):
        pytest.skip("in place, the mask does not broadcast self")
    got = [grads(L, (getattr(L.Tensor, form) if form.endswith("_") else L.masked_scatter), x_shape, s_shape, mask)
           for L in (mg, torch)]
    assert got[0][1] == got[1][1] == "MaskedScatterBackward0"
    for a, b in zip(got[0][:1] + got[0][2:], got[1][:1] + got[1][2:]):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter_(L.tensor([True, False, True]), L.zeros(3, dtype=L.float64)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter(L.tensor([True, False, True]), L.zeros(3)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter_(L.tensor([True, False, True]), L.zeros(4)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter_(L.ones(2, 2, dtype=L.bool), L.zeros(4, dtype=L.float64)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter_(L.ones(4, 2, 3, dtype=L.bool), L.zeros(40, dtype=L.float64)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter(L.ones(2, 2, dtype=L.bool), L.zeros(4, dtype=L.float64)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter(L.ones(3, dtype=L.uint8), L.zeros(4, dtype=L.float64)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter_([True], L.zeros(4)),
    lambda L: L.ones(2, 3, dtype=L.float64).masked_scatter(L.ones(3, dtype=L.bool), 2.0),
])
def test_masked_scatter_refusals(call):
    g, w = same(call)
    assert (g is None) == (w is None)


@pytest.mark.parametrize("index", [[0, 5], [0, -6], [0, -7], [6, -9], [[1, 2]], 4])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32"])
def test_take(index, dtype):
    def call(L):
        x = L.arange(6.0, dtype=L.float64).reshape(2, 3).requires_grad_()
        y = x.take(L.tensor(index).to(getattr(L, dtype)))
        (y * 2).sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    g, w = same(call)
    if w is not None:
        assert g[1] == w[1] == "TakeBackward0"
        for a, b in ((g[0], w[0]), (g[2], w[2])):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(0).take(L.tensor([1])),
    lambda L: L.zeros(0).take(L.tensor([1], dtype=L.int32)),
    lambda L: L.ones(2).take([1]),
])
def test_take_refusals(call):
    same(call)


@pytest.mark.parametrize("call", [
    lambda L: L.take_along_dim(L.tensor(1.0), L.tensor(0, dtype=L.int32), dim=0),  # the dtype before the dim
    lambda L: L.take_along_dim(L.tensor(1.0), L.tensor(0, dtype=L.int32), dim=5),
    lambda L: L.take_along_dim(L.tensor(1.0), L.tensor(0), dim=5),
    lambda L: L.take_along_dim(L.ones(2, 3), L.tensor([0], dtype=L.int32), dim=5),
    lambda L: L.take_along_dim(L.ones(2, 3), L.tensor([0]), dim=0),
    lambda L: L.take_along_dim(L.tensor(1.0), L.tensor([[0]]), dim=0),
    lambda L: L.take_along_dim(L.ones(2, 3), L.tensor([[0]], dtype=L.float32)),
    lambda L: L.take_along_dim(L.ones(0, 2, 3), L.zeros(0, 0, 3, dtype=L.int64), dim=0),  # which size is a, which b
])
def test_take_along_dim_checks(call):
    same(call)


def test_take_along_dim_flat_is_gather():
    for L in (mg, torch):
        x = L.ones(2, 3, requires_grad=True)
        y = L.take_along_dim(x, L.tensor([[0, 4]], dtype=L.int32))
        assert type(y.grad_fn).__name__ == "GatherBackward0" and tuple(y.shape) == (2,)


def test_index_copy_records_its_node():
    def call(L):
        x = L.ones(2, 3, dtype=L.float64, requires_grad=True)
        s = L.arange(6.0, dtype=L.float64).reshape(2, 3).requires_grad_()
        y = x.clone().index_copy_(0, L.tensor([1, 0]), s)
        (y * L.arange(6.0, dtype=L.float64).reshape(2, 3)).sum().backward()
        return type(y.grad_fn).__name__, x.grad, s.grad
    g, w = same(call)
    assert g[0] == w[0] == "IndexCopyBackward0"
    for a, b in zip(g[1:], w[1:]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("index", [[-1], [3], -1, 1])
def test_index_select_of_a_scalar_out_of_range(index):
    same(lambda L: L.tensor(1.0).index_select(0, L.tensor(index)))


@pytest.mark.parametrize("make", [
    lambda L, x: x[[1, 9], [7, 1]],  # PyTorch walks the result's elements: (1, 7) fails before (9, 1)
    lambda L, x: x[[[1, 9]], [[7], [1]]],
    lambda L, x: x[[[1], [9]], [[1, 7]]],
    lambda L, x: x[True, [1], [9]],  # a bool is an index tensor of its own dim
    lambda L, x: x[True, True, [1], [7]],
    lambda L, x: x[L.tensor(True), [7]],
    lambda L, x: x[[0, 7], True],
    lambda L, x: x[:, [1], [9]],
    lambda L, x: x[L.tensor([[True] * 4] * 3), [9]],
    lambda L, x: x[[1], 9, [7]],  # an int: checked first, at its own dim
    lambda L, x: x[None, [1, 0], None, [0, 9]],
    lambda L, x: x[[[0, 4]], [7]],
])
def test_several_advanced_indices_out_of_range(make):
    same(lambda L: make(L, L.ones(3, 4, 5)))


@pytest.mark.parametrize("make", [
    lambda L, x: x.__setitem__(([1, 9], [7, 1]), 2.0),
    lambda L, x: x.__setitem__((True, [1], [9]), 2.0),
])
def test_several_advanced_indices_out_of_range_written(make):
    same(lambda L: make(L, L.ones(3, 4, 5)))
