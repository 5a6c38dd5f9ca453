"""gather, index_select, scatter_ and scatter_reduce through their flat-index paths (one 1-D index into the
flattened array, numpy's take and bincount), against PyTorch: values, dtypes, gradients and refusals."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(29)


def both(arr, requires_grad=False):
    return mg.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_matches_torch_with_gradient(dim):
    x = rng.standard_normal((5, 6, 7)).astype(np.float32)
    shape = [4, 5, 6]
    idx = rng.integers(0, x.shape[dim], shape)  # (repeats: the gradient sums them)
    (xm, xt), (im, it) = both(x, True), both(idx)
    om, ot = xm.gather(dim, im), xt.gather(dim, it)
    np.testing.assert_array_equal(om.detach().numpy(), ot.detach().numpy())
    g = rng.standard_normal(shape).astype(np.float32)
    om.backward(mg.tensor(g)), ot.backward(torch.tensor(g))
    np.testing.assert_array_equal(xm.grad.numpy(), xt.grad.numpy())
    assert om.grad_fn.name() == ot.grad_fn.name()


def test_gather_of_a_transposed_input_and_a_bad_id():
    x = rng.standard_normal((6, 4)).astype(np.float64)
    (xm, xt), (im, it) = both(x), both(rng.integers(0, 6, (4, 3)))
    np.testing.assert_array_equal(xm.t().gather(1, im).numpy(), xt.t().gather(1, it).numpy())
    bad = np.array([[0], [-1]])
    with pytest.raises(RuntimeError) as em:
        xm.gather(1, mg.tensor(bad))
    with pytest.raises(RuntimeError) as et:
        xt.gather(1, torch.tensor(bad))
    assert str(em.value) == str(et.value)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_index_select_matches_torch(dim, dtype):
    x = (rng.standard_normal((8, 9)) * 10).astype(dtype)
    ids = rng.integers(0, x.shape[1 - dim], 20).astype(np.int32)
    (xm, xt), (im, it) = both(x), both(ids)
    om, ot = xm.t().index_select(dim, im), xt.t().index_select(dim, it)
    assert om.dtype == mg.int32 if dtype == np.int32 else om.dtype == mg.float32
    np.testing.assert_array_equal(om.numpy(), ot.numpy())
    assert om.is_contiguous()


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64])
def test_scatter_reduce_matches_torch(reduce, include_self, dtype):
    x = rng.integers(-5, 6, (6, 40)).astype(dtype)
    src = rng.integers(-5, 6, (6, 50)).astype(dtype)
    idx = rng.integers(0, 40, (5, 45))  # (smaller than src: only its part the index reaches is read)
    (xm, xt), (sm, st), (im, it) = both(x), both(src), both(idx)
    om = xm.scatter_reduce(1, im, sm, reduce, include_self=include_self)
    ot = xt.scatter_reduce(1, it, st, reduce, include_self=include_self)
    assert str(om.dtype).split(".")[1] == str(ot.dtype).split(".")[1]
    np.testing.assert_array_equal(om.numpy(), ot.numpy())


def test_scatter_reduce_mean_counts_many_repeats_and_its_gradient():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    src = rng.standard_normal((3, 300)).astype(np.float32)
    idx = rng.integers(0, 2, (3, 300))  # (many repeats at few places; places 2 and 3 untouched)
    (xm, xt), (sm, st), (im, it) = both(x, True), both(src, True), both(idx)
    for inc in (True, False):
        om = xm.scatter_reduce(1, im, sm, "mean", include_self=inc)
        ot = xt.scatter_reduce(1, it, st, "mean", include_self=inc)
        np.testing.assert_allclose(om.detach().numpy(), ot.detach().numpy(), rtol=1e-6)
        om.sum().backward(), ot.sum().backward()
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(sm.grad.numpy(), st.grad.numpy(), rtol=1e-6)
        assert om.grad_fn.name() == ot.grad_fn.name()


def test_scatter_one_hot_in_place_matches_torch():
    ids = rng.integers(0, 10, 64)
    zm, zt = mg.zeros(64, 10), torch.zeros(64, 10)
    version = zm._version
    assert zm.scatter_(1, mg.tensor(ids).unsqueeze(1), 1.0) is zm
    zt.scatter_(1, torch.tensor(ids).unsqueeze(1), 1.0)
    np.testing.assert_array_equal(zm.numpy(), zt.numpy())
    assert zm._version == version + 1


def test_scatter_in_place_of_a_src_into_a_view_and_refusals():
    x = rng.standard_normal((5, 8)).astype(np.float32)
    src = rng.standard_normal((5, 8)).astype(np.float32)
    idx = rng.integers(0, 5, (3, 8))
    (xm, xt), (sm, st), (im, it) = both(x), both(src), both(idx)
    xm.t().scatter_(1, im.t(), sm.t()), xt.t().scatter_(1, it.t(), st.t())  # (a strided view of x)
    np.testing.assert_array_equal(xm.numpy(), xt.numpy())
    for args in [(1, np.array([[9]]), 1.0), (1, np.array([[0]]), 1e300)]:
        im2, it2 = both(args[1])
        with pytest.raises(RuntimeError) as em:
            mg.zeros(2, 3, dtype=mg.int8).scatter_(args[0], im2, args[2])
        with pytest.raises(RuntimeError) as et:
            torch.zeros(2, 3, dtype=torch.int8).scatter_(args[0], it2, args[2])
        assert str(em.value) == str(et.value)
