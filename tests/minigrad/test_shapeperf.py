"""Issue 29: the shape ops' own paths around Function.apply (the pieces of split/chunk/unbind made views in one
pass, unbind's move of `dim` to the front, the array-only backwards of permute, squeeze, unsqueeze, split,
unbind and basic indexing) give PyTorch's values, gradients, views and refusals."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    data = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)


def _weights(outs, seed=1):
    r = np.random.RandomState(seed)
    return [np.asarray(r.randn(*o.shape), dtype=np.float32) for o in outs]


@pytest.mark.parametrize("shape,dim", [((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), 2), ((2, 3, 4, 5), 2),
                                       ((2, 3, 4, 5), -1), ((6,), 0)])
def test_unbind_values_views_and_grads_match_torch(shape, dim):
    a, ta = _pair(shape)
    x, tx = a * 1, ta * 1
    outs, touts = x.unbind(dim), tx.unbind(dim)
    assert len(outs) == len(touts)
    for o, t in zip(outs, touts):
        assert o.shape == t.shape and o.grad_fn.name() == t.grad_fn.name() == "UnbindBackward0"
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
        assert o._base is x and np.shares_memory(o.array, x.array)
    ws = _weights(outs)
    sum((o * mg.tensor(w)).sum() for o, w in zip(outs, ws)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(touts, ws)).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["split", "chunk", "unbind"])
def test_some_pieces_unused_give_zeros_as_torch(op):
    a, ta = _pair((4, 12))
    cut = {"split": lambda t: t.split([3, 5, 4], 1), "chunk": lambda t: t.chunk(3, 1), "unbind": lambda t: t.unbind(1)}[op]
    outs, touts = cut(a), cut(ta)
    (outs[1] * 2).sum().backward()
    (touts[1] * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())


@pytest.mark.parametrize("op", ["split", "chunk", "unbind"])
def test_pieces_share_the_version_counter_and_refuse_in_place_as_torch(op):
    cut = {"split": lambda t: t.split(2, 0), "chunk": lambda t: t.chunk(2, 0), "unbind": lambda t: t.unbind(0)}[op]
    a, ta = _pair((4, 3))
    x, tx = a * 1, ta * 1
    pieces, tpieces = cut(x), cut(tx)
    with pytest.raises(RuntimeError) as theirs:
        tpieces[0].mul_(2)
    with pytest.raises(RuntimeError) as ours:
        pieces[0].mul_(2)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]
    # a view of a piece is refused too
    with pytest.raises(RuntimeError):
        tpieces[1][0:1].mul_(2)
    with pytest.raises(RuntimeError):
        pieces[1][0:1].mul_(2)
    x.array[...]  # (unchanged: the refusals wrote nothing)
    v = x._version
    x.add_(1)  # the base written in place: every piece sees the new version
    assert x._version == v + 1 and all(p._version == x._version for p in pieces)


def test_pieces_under_no_grad_of_a_grad_input_are_no_grad_views_as_torch():
    a, ta = _pair((4, 3))
    with mg.no_grad():
        pieces = a.split(2, 0)
    with torch.no_grad():
        tpieces = ta.split(2, 0)
    assert [p.requires_grad for p in pieces] == [t.requires_grad for t in tpieces]
    assert all(p._base is a for p in pieces)
    with pytest.raises(RuntimeError) as theirs:
        tpieces[0].mul_(2)
    with pytest.raises(RuntimeError) as ours:
        pieces[0].mul_(2)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_int_pieces_are_views_without_grad():
    x = mg.arange(12).reshape(3, 4)
    y = mg.tensor(np.ones((3, 4), np.float32), requires_grad=True)
    pieces = x.split(2, 1)
    assert all(p._version_counter is x._version_counter and not p.requires_grad for p in pieces)
    assert all(p.grad_fn is not None for p in y.split(2, 1))


@pytest.mark.parametrize("name", ["permute", "squeeze", "unsqueeze", "slice", "select", "split", "unbind"])
def test_backward_and_double_backward_match_torch(name):
    f = {
        "permute": lambda t: t.permute(2, 0, 1),
        "squeeze": lambda t: t[:, :1].squeeze(1),
        "unsqueeze": lambda t: t.unsqueeze(1),
        "slice": lambda t: t[:, 1:3],
        "select": lambda t: t[1],
        "split": lambda t: t.split([1, 3], 1)[1],
        "unbind": lambda t: t.unbind(2)[3],
    }[name]
    a, ta = _pair((3, 4, 5))
    y, ty = f(a * a), f(ta * ta)
    assert y.grad_fn.name() == ty.grad_fn.name()
    w = _weights([y])[0]
    (g,) = mg.autograd.grad((y * mg.tensor(w)).sum(), a, create_graph=True)
    (tg,) = torch.autograd.grad((ty * torch.tensor(w)).sum(), ta, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-6)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("dims", [(1, 0, 2), (2, 0, 1), (1, 2, 0), (0, 1, 2)])
def test_permute_backward_matches_torch(dims):
    a, ta = _pair((2, 3, 4))
    y, ty = a.permute(*dims), ta.permute(*dims)
    w = _weights([y])[0]
    (y * mg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    assert a.grad.shape == ta.grad.shape


def test_list_in_a_tuple_index_still_takes_the_advanced_path():
    a, ta = _pair((3, 5))
    y, ty = a[:, [4, 0, 4]], ta[:, [4, 0, 4]]
    assert y.grad_fn.name() == ty.grad_fn.name() == "IndexBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
