"""PyTorch 2.13's names for real tensors that scripts use: torch.short, real / imag / angle / conj_physical /
adjoint, output_nr, new_empty_strided, unsafe_split / unsafe_chunk, nextafter_ / polygamma_, the autocast state
queries, torch.GradScaler, torch.channel_shuffle and torch.constant_pad_nd; each against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad

X = np.array([1.5, -2.0, 0.0, -0.0, np.nan, -np.inf, np.inf])


def test_short_dtype(torch):
    assert minigrad.short is minigrad.int16
    y = minigrad.tensor([1.7, -2.2]).short()
    assert y.dtype is minigrad.short and y.tolist() == torch.tensor([1.7, -2.2]).short().tolist()
    assert minigrad.zeros(2, dtype=minigrad.short).dtype is minigrad.int16
    with pytest.raises(TypeError, match="^zeros\\(\\): argument 'dtype' must be torch.dtype, not str$"):
        torch.zeros(2, dtype="short")  # (a dtype's name is no dtype to PyTorch's parser, nor to minigrad's)
    with pytest.raises(TypeError, match="^zeros\\(\\): argument 'dtype' must be torch.dtype, not str$"):
        minigrad.zeros(2, dtype="short")


def test_real_imag_angle(torch):
    x, tx = minigrad.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    assert x.real is x and minigrad.real(x) is x
    for t in (x, tx):
        with pytest.raises(RuntimeError, match="^imag is not implemented for tensors with non-complex dtypes.$"):
            getattr(t, "imag")  # noqa: B009 (the attribute read is what raises)
    a, ta = x.angle(), tx.angle()
    assert a.grad_fn.name() == ta.grad_fn.name() and a.dtype == minigrad.float64
    np.testing.assert_array_equal(a.detach().numpy(), ta.detach().numpy())
    a.sum().backward()
    ta.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())  # zeros, at NaN too
    for data in ([3, -1, 0], [True, False]):
        y, ty = minigrad.angle(minigrad.tensor(data)), torch.angle(torch.tensor(data))
        assert str(y.dtype).split(".")[1] == str(ty.dtype).split(".")[1]
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-7)


def test_conjugates_and_adjoint(torch):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = minigrad.tensor(a, requires_grad=True)
    assert minigrad.conj_physical(x) is x and x.conj_physical() is x and minigrad.conj(x) is x
    y, ty = x.adjoint(), torch.tensor(a).adjoint()
    assert y.shape == tuple(ty.shape) and y._base is x
    np.testing.assert_array_equal(y.detach().numpy(), ty.numpy())
    msgs = []
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError) as e:
            lib.adjoint(lib.tensor([1.0, 2.0]))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_output_nr(torch):
    a = np.random.default_rng(0).standard_normal((4, 3))
    for lib in (minigrad, torch):
        x = lib.tensor(a, requires_grad=True)
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        nrs = [x.output_nr, x.sin().output_nr, u.output_nr, s.output_nr, vh.output_nr]
        if lib is minigrad:
            ours = nrs
    assert ours == nrs == [0, 0, 0, 1, 2]


def test_new_empty_strided(torch):
    for data in ([1.0, 2.0], [1, 2]):
        y, ty = minigrad.tensor(data).new_empty_strided((2, 3), (1, 2)), torch.tensor(data).new_empty_strided((2, 3),
                                                                                                              (1, 2))
        assert y.shape == tuple(ty.shape) and y.stride() == ty.stride() and str(y.dtype)[9:] == str(ty.dtype)[6:]
    y = minigrad.tensor([1.0]).new_empty_strided((2,), (1,), dtype=minigrad.int32, requires_grad=False)
    assert y.dtype is minigrad.int32


@pytest.mark.parametrize("call", [lambda lib, t: lib.unsafe_split(t, 2, 1), lambda lib, t: t.unsafe_chunk(3, 1),
                                  lambda lib, t: lib.unsafe_split_with_sizes(t, [1, 4], 1),
                                  lambda lib, t: t.unsafe_split(3, dim=-1)])
def test_unsafe_splits(torch, call):
    a = np.arange(15.0).reshape(3, 5)
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = call(minigrad, x), call(torch, tx)
    assert [p.shape for p in ours] == [tuple(p.shape) for p in theirs]
    for i, (p, tp) in enumerate(zip(ours, theirs)):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
        (p * (i + 1)).sum().backward()
        (tp * (i + 1)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_unsafe_split_takes_one_size(torch):
    msgs = []
    for lib in (minigrad, torch):
        with pytest.raises(TypeError) as e:
            lib.ones(3, 5).unsafe_split([3, 2], 1)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_nextafter_and_polygamma_in_place(torch):
    a, b = np.array([1.0, -1.0, 0.0]), np.array([2.0, -3.0, -1.0])
    x, tx = minigrad.tensor(a), torch.tensor(a)
    assert x.nextafter_(minigrad.tensor(b)) is x
    tx.nextafter_(torch.tensor(b))
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    x, tx = minigrad.tensor([0.5, 2.0, 3.5]), torch.tensor([0.5, 2.0, 3.5])
    assert x.polygamma_(2) is x
    np.testing.assert_allclose(x.numpy(), tx.polygamma_(2).numpy(), rtol=1e-6)


def test_autocast_state_of_a_device_string(torch):
    # 'cuda:0' names the cuda type's state, as in PyTorch; a type minigrad lacks is its one-line RuntimeError
    # (it was a KeyError from a dict)
    for lib in (minigrad, torch):
        assert lib.is_autocast_enabled("cuda:0") is False and lib.get_autocast_dtype("cpu:0") == lib.bfloat16
    with pytest.raises(RuntimeError, match="no 'mps' device"):
        minigrad.is_autocast_enabled("mps")


def test_autocast_state(torch):
    for lib in (minigrad, torch):
        assert lib.is_autocast_enabled() is False and lib.is_autocast_enabled("cpu") is False
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16 and lib.get_autocast_dtype("cuda") == lib.float16
        with lib.autocast("cpu", dtype=lib.float16):
            inside = (lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(), lib.get_autocast_dtype("cpu"))
            with lib.autocast("cpu", enabled=False):
                nested = lib.is_autocast_enabled("cpu")
        assert inside == (True, False, lib.float16) and nested is False
        assert lib.is_autocast_enabled("cpu") is False and lib.get_autocast_dtype("cpu") == lib.bfloat16
        lib.set_autocast_enabled("cpu", True)
        assert lib.is_autocast_enabled("cpu") is True
        lib.set_autocast_enabled("cpu", False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert lib.get_autocast_cpu_dtype() == lib.bfloat16
        assert "torch.get_autocast_cpu_dtype() is deprecated" in str(w[0].message)


def test_top_level_grad_scaler_and_functional_forms(torch):
    assert minigrad.GradScaler is minigrad.amp.GradScaler
    a = np.arange(2 * 6 * 2.0).reshape(2, 6, 2)
    np.testing.assert_array_equal(minigrad.channel_shuffle(minigrad.tensor(a), 3).numpy(),
                                  torch.channel_shuffle(torch.tensor(a), 3).numpy())
    for pad, value in (((1, 2), 0), ((1, -1, 0, 2), 3.5)):
        y = minigrad.constant_pad_nd(minigrad.tensor(a), pad, value)
        ty = torch.constant_pad_nd(torch.tensor(a), pad, value)
        np.testing.assert_array_equal(y.numpy(), ty.numpy())


def test_as_subclass_is_an_alias_of_the_subclass(torch):
    # minigrad had no Tensor.as_subclass; PyTorch's gives an instance of the subclass sharing the data and the
    # version counter, with one AliasBackward0 node, and refuses a class that is no Tensor
    seen = []
    for L in (torch, minigrad):
        class Sub(L.Tensor):
            pass

        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        z = y.as_subclass(Sub)
        leaf = x.as_subclass(Sub)
        (z * leaf).sum().backward()
        node = z.grad_fn.name()
        z.detach().add_(1)  # (written through the alias: y sees it)
        with pytest.raises(TypeError) as e:
            y.as_subclass(int)
        seen.append((type(z) is Sub, type(x.as_subclass(L.Tensor)) is L.Tensor, node, leaf.is_leaf,
                     leaf.requires_grad, y.tolist(), y._version, x.grad.tolist(), str(e.value)))
    assert seen[1] == seen[0]


def _outcome(L, f):
    """f(L)'s shape, strides, values and version, or its error's type and text."""
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
        return type(e).__name__, str(e)
    return tuple(r.shape), r.stride(), r.tolist(), r._version


def _shrunk_then_filled(L):
    t = L.arange(6.0)
    v = t[:4]
    t.resize_(3)
    t.fill_(7.0)  # (a smaller size keeps the memory: the view sees the write)
    return v


def _view_resized(L):
    t = L.arange(6.0)
    t.view(2, 3).resize_(3).fill_(7.0)
    return t


@pytest.mark.parametrize("f", [
    lambda L: L.arange(6.0).resize_(2, 3), lambda L: L.arange(6.0).resize_((3,)), lambda L: L.arange(3.0).resize_([5])[:3],
    lambda L: L.arange(3.0).resize_(L.Size([1, 3])), lambda L: L.arange(3.0).resize_(3, 0), lambda L: L.arange(3).resize_(2),
    lambda L: L.arange(6.0).reshape(2, 3)[:, 1:].resize_(4), lambda L: L.arange(6.0).reshape(2, 3).t().resize_(3, 2),
    lambda L: L.arange(6.0).reshape(2, 3).t().resize_(6), lambda L: L.arange(3.0).resize_as_(L.zeros(1, 2)),
    lambda L: L.arange(3.0).resize_(-1), lambda L: L.ones(3, requires_grad=True).resize_(2),
    lambda L: (L.ones(3, requires_grad=True) * 2).resize_(3), lambda L: L.arange(4.0).split(2)[0].resize_(3),
    _shrunk_then_filled, _view_resized,
])
def test_resize_as_pytorchs(torch, f):
    assert _outcome(minigrad, f) == _outcome(torch, f)


def _put_recorded(L, accumulate):
    w = L.arange(6.0, requires_grad=True)
    s = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = w.reshape(2, 3).t().put(L.tensor([[0, -1], [4, 0]]), s, accumulate=accumulate)
    (y * L.arange(6.0).reshape(3, 2)).sum().backward()
    z = w * 1
    z.put_(L.tensor([1]), s[0, :1], accumulate=accumulate)
    return y.grad_fn.name(), z.grad_fn.name(), y.tolist(), z.tolist(), w.grad.tolist(), s.grad.tolist()


@pytest.mark.parametrize("f", [
    lambda L: L.arange(4.0).put_(L.tensor([0, 3]), L.tensor([9.0, 8.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([[5, -1]]), L.tensor([9.0, 8.0]), accumulate=True),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([1, 1]), L.tensor([9.0, 1.0]), accumulate=True),
    lambda L: L.arange(6.0).reshape(2, 3).t().put_(L.tensor([1]), L.tensor([9.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put(L.tensor([1]), L.tensor([9.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([6]), L.tensor([9.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([-7]), L.tensor([9.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([1.0]), L.tensor([9.0])),
    lambda L: L.arange(6.0).reshape(2, 3).put_(L.tensor([1, 2]), L.tensor([9.0])),
    lambda L: L.ones(3, requires_grad=True).put_(L.tensor([0]), L.tensor([2.0])),
])
def test_put_as_pytorchs(torch, f):
    assert _outcome(minigrad, f) == _outcome(torch, f)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_gradients_as_pytorchs(torch, accumulate):
    assert _put_recorded(minigrad, accumulate) == _put_recorded(torch, accumulate)


@pytest.mark.parametrize("f", [
    lambda L: L.arange(4.0).map_(L.ones(4), lambda a, b: a + b),
    lambda L: L.arange(4.0).reshape(2, 2).map_(L.arange(2.0), lambda a, b: a * 10 + b),
    lambda L: L.arange(4).map_(L.ones(4), lambda a, b: a / 3),
    lambda L: L.arange(4.0).map_(L.ones(3), lambda a, b: a + b),
    lambda L: L.ones(3, requires_grad=True).map_(L.ones(3), lambda a, b: a + b),
    lambda L: L.ones(3).map_(L.ones(3, requires_grad=True), lambda a, b: a + b),
    lambda L: L.ones(3).map2_(L.arange(3.0), L.tensor([10.0, 20.0, 30.0]), lambda a, b, c: a + b * c),
    lambda L: L.ones(2, 3).map2_(L.arange(3.0), L.ones(2, 1), lambda a, b, c: a + b + c),
    lambda L: L.ones(3).map2_(L.arange(3), L.ones(3), lambda a, b, c: a),
    lambda L: L.ones(3).map2_(L.ones(3), L.arange(3), lambda a, b, c: a),
    lambda L: L.ones(3).map2_(L.ones(3), 2.0, lambda a, b, c: a),
    lambda L: L.ones(3).map2_(L.ones(3), L.ones(3, requires_grad=True), lambda a, b, c: a),
    lambda L: L.ones(3).map2_(L.ones(2), L.ones(3), lambda a, b, c: a),
    lambda L: L.arange(3).map2_(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64), lambda a, b, c: a / 2 + c),
])
def test_map_as_pytorchs(torch, f):
    assert _outcome(minigrad, f) == _outcome(torch, f)


def _set_then_written(L, offset):
    a = L.arange(6.0)
    b = L.zeros(2)
    b.set_(a) if offset is None else b.set_(a, offset, (2,))
    b.fill_(7.0)  # (b views a's memory: a sees the write)
    return a


@pytest.mark.parametrize("f", [
    lambda L: L.zeros(2).set_(L.arange(6.0)), lambda L: L.zeros(2).set_(),
    lambda L: L.zeros(2).set_(L.arange(6.0), 1, (2, 2)), lambda L: L.zeros(2).set_(L.arange(6.0), 1, (2, 2), (1, 2)),
    lambda L: L.zeros(2).set_(L.arange(6.0)[2:], 1, (2,)), lambda L: L.zeros(2).set_(L.arange(6.0).reshape(2, 3).t()),
    lambda L: L.zeros(2, dtype=L.int64).set_(L.arange(6.0)), lambda L: L.zeros(2, requires_grad=True).set_(L.arange(6.0)),
    lambda L: _set_then_written(L, None), lambda L: _set_then_written(L, 2),
])
def test_set_as_pytorchs(torch, f):
    assert _outcome(minigrad, f) == _outcome(torch, f)
