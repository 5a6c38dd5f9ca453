"""gather's small-index path (one numpy call makes the flat index and checks the ids), its unrecorded path (the
arrays alone, no autograd node), and scatter_reduce's backward through the flat index, against PyTorch."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2929)


def both(arr, requires_grad=False):
    return mg.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad)


def same_error(fm, ft, arrays):
    with pytest.raises(Exception) as em:
        fm(*[mg.tensor(a) for a in arrays])
    with pytest.raises(Exception) as et:
        ft(*[torch.tensor(a) for a in arrays])
    assert type(em.value) is type(et.value)
    assert str(em.value) == str(et.value)


# index sizes on either side of the small-index path's limit, 2-D to 4-D, int64 and int32
@pytest.mark.parametrize("xshape,ishape,dim", [
    ((64, 32), (64, 1), 1), ((64, 32), (64, 8), 1), ((64, 32), (64, 32), 0), ((8, 5, 7), (8, 4, 3), 2),
    ((3, 4, 5, 6), (3, 4, 5, 6), 1), ((40, 40), (30, 20), 0)])
@pytest.mark.parametrize("itype", [np.int64, np.int32])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_gather_matches_torch(xshape, ishape, dim, itype, requires_grad):
    x = rng.standard_normal(xshape).astype(np.float32)
    idx = rng.integers(0, xshape[dim], ishape).astype(itype)
    (xm, xt), (im, it) = both(x, requires_grad), both(idx)
    om, ot = xm.gather(dim, im), xt.gather(dim, it)
    np.testing.assert_array_equal(om.detach().numpy(), ot.detach().numpy())
    assert om.dtype == mg.float32 and om.requires_grad == ot.requires_grad
    assert (om.grad_fn and om.grad_fn.name()) == (ot.grad_fn and ot.grad_fn.name())
    if requires_grad:
        g = rng.standard_normal(ishape).astype(np.float32)
        om.backward(mg.tensor(g)), ot.backward(torch.tensor(g))
        np.testing.assert_array_equal(xm.grad.numpy(), xt.grad.numpy())


def test_unrecorded_gather_is_a_new_array_with_no_history():
    x = rng.standard_normal((6, 5)).astype(np.float32)
    (xm, xt), (im, it) = both(x, True), both(rng.integers(0, 5, (6, 1)))
    with mg.no_grad():
        om = xm.gather(1, im)
    with torch.no_grad():
        ot = xt.gather(1, it)
    assert om.grad_fn is None and ot.grad_fn is None and not om.requires_grad
    om.add_(1.0), ot.add_(1.0)  # (a copy: self is untouched)
    np.testing.assert_array_equal(xm.detach().numpy(), x)
    np.testing.assert_array_equal(om.numpy(), ot.numpy())


def test_gather_of_int_and_bool_inputs():
    for arr in (rng.integers(-9, 9, (7, 4)), rng.integers(0, 2, (7, 4)).astype(bool)):
        (xm, xt), (im, it) = both(arr), both(rng.integers(0, 4, (7, 2)))
        om, ot = xm.gather(1, im), xt.gather(1, it)
        assert str(om.dtype).split(".")[-1] == str(ot.dtype).split(".")[-1]
        np.testing.assert_array_equal(om.numpy(), ot.numpy())


@pytest.mark.parametrize("bad", [-1, 32, -33, 10 ** 6])
@pytest.mark.parametrize("size", [4, 600])  # (the small-index path, and the other)
def test_gather_refuses_an_id_out_of_range_as_torch(bad, size):
    x = rng.standard_normal((size, 32)).astype(np.float32)
    idx = rng.integers(0, 32, (size, 1))
    idx[size // 2, 0] = bad
    idx[-1, 0] = 40  # (PyTorch names the first bad id)
    same_error(lambda x, i: x.gather(1, i), lambda x, i: x.gather(1, i), [x, idx])
    same_error(lambda x, i: x.gather(0, i.t()), lambda x, i: x.gather(0, i.t()), [x.T.copy(), idx])


def test_gather_checks_the_index_shape_before_its_ids():
    x = rng.standard_normal((4, 3)).astype(np.float32)
    idx = np.full((5, 2), 7)  # too many rows, and every id out of range
    same_error(lambda x, i: x.gather(1, i), lambda x, i: x.gather(1, i), [x, idx])


def test_gather_of_an_empty_index():
    x = rng.standard_normal((4, 3)).astype(np.float32)
    (xm, xt), (im, it) = both(x), both(np.zeros((0, 9), np.int64))
    om, ot = xm.gather(1, im), xt.gather(1, it)
    assert tuple(om.shape) == tuple(ot.shape)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("xshape,sshape,dim", [((6, 8), (6, 10), 1), ((9, 4), (12, 3), 0), ((3, 4, 5), (3, 4, 6), 2)])
def test_scatter_reduce_backward_matches_torch(reduce, include_self, xshape, sshape, dim):
    # small integers: ties for amax/amin, zeros (one and several per place) for prod
    x = rng.integers(-2, 3, xshape).astype(np.float64)
    src = rng.integers(-2, 3, sshape).astype(np.float64)
    idx = rng.integers(0, xshape[dim], sshape)  # (PyTorch's backward refuses a src larger than the index)
    (xm, xt), (sm, st), (im, it) = both(x, True), both(src, True), both(idx)
    om = xm.scatter_reduce(dim, im, sm, reduce, include_self=include_self)
    ot = xt.scatter_reduce(dim, it, st, reduce, include_self=include_self)
    np.testing.assert_allclose(om.detach().numpy(), ot.detach().numpy(), rtol=1e-12)
    assert om.grad_fn.name() == ot.grad_fn.name()
    g = rng.standard_normal(xshape)
    om.backward(mg.tensor(g)), ot.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sm.grad.numpy(), st.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_scatter_reduce_double_backward_matches_torch():
    x = rng.integers(-2, 3, (5, 6)).astype(np.float64)
    src = rng.integers(-2, 3, (5, 7)).astype(np.float64)
    idx = rng.integers(0, 6, (5, 7))
    (xm, xt), (sm, st), (im, it) = both(x, True), both(src, True), both(idx)
    outs = []
    for lib, a, s, i in ((mg, xm, sm, im), (torch, xt, st, it)):
        o = a.scatter_reduce(1, i, s, "prod")
        (ga,) = lib.autograd.grad(o.sum(), a, create_graph=True)
        outs.append(lib.autograd.grad((ga * ga).sum(), s)[0])
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12, atol=1e-12)
