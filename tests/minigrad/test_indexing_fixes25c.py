"""index_put / index_put_ with accumulate=True and index_reduce_ of a 0-d self, against PyTorch: the node
recorded, the order of the checks and their words, and the gradients."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (IndexError, RuntimeError) as e:
        return None, (type(e).__name__, str(e).split("\n")[0])


def index_put(L, shape, ids, values_shape, inplace=True, values_dtype="float64"):
    """x.index_put_(ids, v, accumulate=True) on a clone of a leaf, then a weighted sum's gradients."""
    x0 = L.tensor(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape), requires_grad=True)
    v = L.tensor(np.arange(1.0, 1.0 + int(np.prod(values_shape))).reshape(values_shape),
                 dtype=getattr(L, values_dtype), requires_grad=True)
    x = x0.clone()
    ix = tuple(L.tensor(i, dtype=L.int64) for i in ids)
    out = x.index_put_(ix, v, accumulate=True) if inplace else x.index_put(ix, v, accumulate=True)
    w = L.tensor(np.arange(2.0, 2.0 + out.numel()).reshape(tuple(out.shape)))
    (out * w).sum().backward()
    return out.detach().numpy(), type(out.grad_fn).__name__.split("::")[-1], x0.grad.numpy(), v.grad.numpy()


def compare(*case, **kw):
    got, g_err = outcome(lambda: index_put(mg, *case, **kw))
    want, w_err = outcome(lambda: index_put(torch, *case, **kw))
    assert g_err == w_err
    if w_err is None:
        assert got[1] == want[1]
        for g, w in zip(got[::2] + got[3:], want[::2] + want[3:]):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    return g_err


@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("case", [
    ((3,), [[0, 0, 1]], ()),  # repeats summed, the value's gradient summed from a 0-d value
    ((3,), [[0, 0, 1]], (3,)),
    ((3,), [[0, 0, 1]], (1,)),
    ((2, 3), [[0, 0]], (3,)),  # a value broadcast over the rows: its gradient summed back
    ((2, 3), [[0, 0]], (2, 1)),
    ((2, 3), [[0, 1], [2]], ()),  # ids broadcast against each other
    ((2, 3), [[1, 0], [-1, 0]], (2,)),  # ids from the end
])
def test_index_put_accumulate_records_index_put_backward(case, inplace):
    assert compare(*case, inplace=inplace) is None


@pytest.mark.parametrize("case", [
    ((0,), [[]], ()),
    ((2, 0), [[5]], ()),  # nothing is added: the ids are never read (PyTorch checks them as it adds)
    ((2, 0), [[3]], (1, 0)),
])
def test_index_put_accumulate_takes_ids_it_never_reads(case):
    assert compare(*case) is None


@pytest.mark.parametrize("case", [
    ((0,), [[0]], ()),  # an indexed dim of size 0: PyTorch's own words, before anything else
    ((0,), [[5, 1]], (3,)),
    ((0, 3), [[0], [1]], ()),
    ((2, 0), [[0], [5]], ()),
    ((2, 0), [[5]], (3,)),  # the values' shape before the ids
    ((3,), [[5]], (2,)),
    ((3,), [[5]], (1,)),  # then the ids, element by element
    ((2, 3), [[0, 0], [5, 1]], ()),
    ((2, 3), [[5, 0], [1, 7]], ()),
    ((2, 3), [[0, 0]], (1, 1, 3)),  # no leading dims of 1 beyond the indexed shape
])
def test_index_put_accumulate_refuses_in_pytorch_order(case):
    assert compare(*case) is not None


@pytest.mark.parametrize("case", [((3,), [[5]], (2,)), ((0,), [[0]], ()), ((3,), [[5]], (1,))])
def test_index_put_accumulate_checks_the_dtypes_after_the_shapes(case):
    assert compare(*case, values_dtype="float32") is not None


def test_index_put_accumulate_adds_into_self_in_order():
    # each value added to self's entry in turn, as PyTorch's kernel: 1 + 1e-16 + 1e-16 stays 1, where
    # summing the repeats first (2e-16) would not
    for L in (mg, torch):
        x = L.ones(1, dtype=L.float64)
        out = x.index_put((L.tensor([0, 0]),), L.tensor([1e-16, 1e-16], dtype=L.float64), accumulate=True)
        assert out.item() == 1.0


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
def test_index_reduce_of_a_zero_dim_self_backward(reduce, include_self):
    results = []
    for L in (mg, torch):
        x0 = L.tensor(2.0, dtype=L.float64, requires_grad=True)
        s = L.tensor(3.0, dtype=L.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = x0.clone().index_reduce_(0, L.tensor([0]), s, reduce, include_self=include_self)
        (out * 5).sum().backward()
        results.append((out.item(), tuple(out.shape), type(out.grad_fn).__name__, x0.grad.item(), s.grad.item()))
    assert results[0] == results[1]


@pytest.mark.parametrize("shape, ids, dim", [((1,), [-1], 0), ((3,), [-1, -3, 5, -7], 0), ((2, 3), [[-1], [4]], 1),
                                             ((3,), [-1], None)])
def test_take_along_dim_takes_ids_modulo_the_dim(shape, ids, dim):
    results = []
    for L in (mg, torch):
        x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        got, err = outcome(lambda L=L, x=x: L.take_along_dim(x, L.tensor(ids), dim=dim))
        if err is None:
            (got * L.tensor(np.arange(1.0, 1.0 + got.numel()).reshape(tuple(got.shape)))).sum().backward()
            got = (got.detach().numpy().tolist(), x.grad.numpy().tolist())
        results.append((got, err))
    assert results[0] == results[1]
