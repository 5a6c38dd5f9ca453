"""Ops whose backward runs on arrays when no graph of the backward is wanted (no create_graph), and
their recorded form otherwise: both give the same gradient, bit for bit, and PyTorch's values; and the
short forward paths (stack, tril, unsqueeze, squeeze, .T, clamp between numbers) give what the general
ones give."""
import functools
import itertools
import warnings

import numpy as np
import pytest

import minigrad


def _grads(fn, a, g):
    """fn(a)'s gradient for upstream g: plain backward (the array path), then create_graph (recorded ops)."""
    x = minigrad.tensor(a, requires_grad=True)
    out = fn(x)
    (plain,) = minigrad.autograd.grad(out, x, grad_outputs=minigrad.tensor(g))
    x2 = minigrad.tensor(a, requires_grad=True)
    (recorded,) = minigrad.autograd.grad(fn(x2), x2, grad_outputs=minigrad.tensor(g, requires_grad=True),
                                         create_graph=True)
    assert recorded.requires_grad  # (it took the recorded path)
    return out.array, plain.array, recorded.array


def _with_ties(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=shape).astype(np.float32)  # repeated values: ties share the gradient
    a.flat[0] = np.nan if a.size > 3 else a.flat[0]
    return a


CASES = {
    "max": lambda x: x.max(),
    "min": lambda x: x.min(),
    "amax(1)": lambda x: x.amax(1),
    "amin(0, keepdim)": lambda x: x.amin(0, keepdim=True),
    "max(1).values": lambda x: x.max(1).values,
    "min(-1, keepdim).values": lambda x: x.min(-1, keepdim=True).values,
    "max(0).values": lambda x: x.max(0).values,
    "clamp(-1, 1)": lambda x: x.clamp(-1, 1),
    "clamp(min=0)": lambda x: x.clamp(min=0),
    "clamp(max=0.5)": lambda x: x.clamp(max=0.5),
    "clamp(2, -2)": lambda x: x.clamp(2, -2),
    "clamp(min=nan)": lambda x: x.clamp(min=float("nan")),
    "clamp(-1, nan)": lambda x: x.clamp(-1, float("nan")),
    "x / x.sum(-1, keepdim)": lambda x: x / (x.sum(-1, keepdim=True) + 20.0),  # Div: a broadcast divisor too
    "3 / x": lambda x: 3.0 / (x + 7.5),
    "gather(1)": lambda x: x.gather(1, (x > 99).long()[:, :2]),  # (column 0 picked twice a row: summed back)
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(4, 6), (3, 1), (1, 5)])
def test_array_backward_equals_the_recorded_one_and_pytorch(torch, name, shape):
    fn = CASES[name]
    a = _with_ties(shape, 0)
    if name.startswith(("max(", "min(")):
        a = np.nan_to_num(a, nan=0.5)  # (which NaN is picked is PyTorch's own business)
    out = fn(minigrad.tensor(a))
    g = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    y, plain, recorded = _grads(fn, a, g)
    assert plain.dtype == np.float32 and np.array_equal(plain, recorded, equal_nan=True)
    tx = torch.tensor(a, requires_grad=True)
    ty = fn(tx)
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(y, ty.detach().numpy())
    np.testing.assert_allclose(plain, tx.grad.numpy(), rtol=1e-6)


def test_max_of_a_zero_dim_tensor_and_of_float64():
    x = minigrad.tensor(2.5, requires_grad=True)
    x.max().backward()
    assert x.grad.item() == 1.0
    a = np.array([[1.0, 3.0, 3.0], [0.0, -1.0, 2.0]])
    y, plain, recorded = _grads(lambda t: t.max(), a, np.array(6.0))
    assert y == 3.0 and plain.dtype == np.float64 and np.array_equal(plain, [[0, 3, 3], [0, 0, 0]])
    assert np.array_equal(plain, recorded)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack_forward_and_backward_against_pytorch(torch, dim):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(5)]
    xs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    out = minigrad.stack(xs, dim)
    txs = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = torch.stack(txs, dim)
    np.testing.assert_array_equal(out.array, tout.detach().numpy())
    g = rng.standard_normal(out.shape).astype(np.float32)
    out.backward(minigrad.tensor(g))
    tout.backward(torch.tensor(g))
    for x, tx in zip(xs, txs):
        np.testing.assert_array_equal(x.grad.array, tx.grad.numpy())
    assert out.grad_fn.name() == "StackBackward0"


def test_stack_keeps_its_checks_and_promotion():
    a, b = minigrad.ones(2, 3), minigrad.ones(2, 3, dtype=minigrad.float64)
    assert minigrad.stack([a, b]).dtype == minigrad.float64
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        minigrad.stack([a, minigrad.ones(3, 2)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.stack([a, a], 3)
    s = minigrad.stack([minigrad.tensor(1.0), minigrad.tensor(2.0)])  # 0-d pieces
    assert s.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_stack_under_no_grad_like_pytorch(torch, dim):
    # no node and a fresh array (not a view of an input); promotion and error texts as with grad on
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(4)]
    for L in (minigrad, torch):
        xs = [L.tensor(a, requires_grad=True) for a in arrays]
        with L.no_grad():
            out = L.stack(xs, dim)
            mixed = L.stack([L.tensor(arrays[0]), L.tensor([[1, 2]] * 3)], dim)  # float32 with int64
            with pytest.raises(RuntimeError) as shapes:
                L.stack([xs[0], L.ones(2, 3)], dim)
        out.mul_(2)  # (an in-place write to the result leaves the inputs alone)
        if L is minigrad:
            got, got_mixed, got_error = out, mixed, str(shapes.value)
            assert [x.array.tolist() for x in xs] == [a.tolist() for a in arrays]
        else:
            np.testing.assert_array_equal(got.numpy(), out.numpy())
            assert got.shape == tuple(out.shape) and not got.requires_grad and got.grad_fn is None
            assert str(got_mixed.dtype)[9:] == str(mixed.dtype)[6:]
            np.testing.assert_array_equal(got_mixed.numpy(), mixed.numpy())
            assert got_error == str(shapes.value)


@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (2, 3, 4), (1, 1), (0, 3)])
def test_tril_and_triu_are_numpys(shape):
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    if a.size:
        a.flat[-1] = np.nan
    for k in range(-8, 9):
        for name in ("tril", "triu"):
            x = minigrad.tensor(a, requires_grad=True)
            y = getattr(minigrad, name)(x, k)
            assert np.array_equal(y.array, getattr(np, name)(a, k), equal_nan=True)
            y.sum().backward()
            assert np.array_equal(x.grad.array, getattr(np, name)(np.ones_like(a), k))
    b = a > 0  # other dtypes take the same mask
    assert np.array_equal(minigrad.tril(minigrad.tensor(b), 1).array, np.tril(b, 1))


def test_views_by_short_paths_are_views():
    x = minigrad.randn(3, 4, requires_grad=True)
    for v, shape, node in ((x.T, (4, 3), "PermuteBackward0"), (x.unsqueeze(1), (3, 1, 4), "UnsqueezeBackward0"),
                           (x.unsqueeze(-1), (3, 4, 1), "UnsqueezeBackward0"),
                           (x.unsqueeze(1).squeeze(1), (3, 4), "SqueezeBackward1"),
                           (x.unsqueeze(1).squeeze(0), (3, 1, 4), "SqueezeBackward1")):
        assert tuple(v.shape) == shape and v.grad_fn.name() == node and v._base is x
        assert np.shares_memory(v.array, x.array)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze(3)
    t = minigrad.randn(2, 3, 4).T
    assert tuple(t.shape) == (4, 3, 2)
    x.T.sum().backward()
    assert np.array_equal(x.grad.array, np.ones((3, 4), np.float32))


def test_float_double_long_of_that_dtype_are_the_tensor_itself():
    x = minigrad.randn(2)
    assert x.float() is x and x.double() is not x and x.double().double() is not x
    i = minigrad.arange(3)
    assert i.long() is i and i.float().dtype == minigrad.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_mean_is_numpys_mean_and_its_backward_the_recorded_one(dtype):
    # mean over any dims runs numpy's own steps (the sum, a division by the count) without numpy's Python
    # around them: numpy's mean bit for bit, as a number or an array, in the tensor's dtype; its backward
    # on arrays (no create_graph) gives the recorded backward's gradient bit for bit
    rng = np.random.default_rng(int(np.dtype(dtype).itemsize))
    for shape in [(), (7,), (3, 5), (4, 1, 6), (2, 3, 4, 5)]:
        a = (rng.standard_normal(shape) * 1000).astype(dtype)
        for k in range(len(shape) + 1):
            for dims in itertools.combinations(range(len(shape)), k):
                for keepdim in (False, True):
                    got = minigrad.tensor(a).mean(dims if dims else None, keepdim=keepdim and bool(dims))
                    want = a.mean(axis=dims if dims else None, keepdims=keepdim and bool(dims))
                    assert got.dtype == minigrad.tensor(a).dtype and got.shape == np.shape(want)
                    assert np.array_equal(got.numpy(), want)
                    if dims:
                        fn = functools.partial(minigrad.Tensor.mean, dim=dims, keepdim=keepdim)
                        g = rng.standard_normal(np.shape(want)).astype(dtype)
                        out, plain, recorded = _grads(fn, a, g)
                        assert np.array_equal(plain, recorded) and plain.dtype == a.dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (numpy's "Mean of empty slice")
        assert np.isnan(minigrad.zeros(0, 3).mean().item())  # an empty mean: nan, as PyTorch


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_are_numpys(op, dtype):
    # var and std over any dims take numpy's own steps without its Python around them: numpy's result bit
    # for bit (a number or an array, in the tensor's dtype), for corrections 0, 1 and 0.5; no degrees of
    # freedom left gives inf or nan as before, without numpy's warning (with PyTorch's)
    rng = np.random.default_rng(3)
    for shape in [(20,), (3, 5), (4, 1, 6), (2, 3, 4, 5)]:
        a = (rng.standard_normal(shape) * 100 + 1000).astype(dtype)
        t = minigrad.tensor(a)
        for k in range(1, len(shape) + 1):
            for dims in itertools.combinations(range(len(shape)), k):
                for keepdim in (False, True):
                    for correction in (0, 1, 0.5):
                        got = getattr(t, op)(dims, correction=correction, keepdim=keepdim)
                        if dtype == np.float16:  # PyTorch's half var: in float32, rounded once (numpy's overflows)
                            want = getattr(a.astype(np.float32), op)(axis=dims, ddof=correction,
                                                                     keepdims=keepdim).astype(np.float16)
                        else:
                            want = getattr(a, op)(axis=dims, ddof=correction, keepdims=keepdim)
                        assert got.dtype == t.dtype and got.shape == np.shape(want)
                        assert np.array_equal(got.numpy(), want, equal_nan=True)
    with warnings.catch_warnings(), pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        warnings.simplefilter("error", RuntimeWarning)
        none_left = getattr(minigrad.tensor(np.ones((1, 3), dtype=dtype)), op)(0)
    assert np.isnan(none_left.numpy()).all()


@pytest.mark.parametrize("op", ["var", "std", "mean"])
def test_no_degrees_of_freedom_left_as_torch_and_the_warnings_shown_stay_shown(torch, op):
    # var and std with correction >= n, and the mean of nothing: PyTorch's inf and nan in the tensor's dtype
    # and shape; and computed without silencing numpy's warning through warnings.catch_warnings, whose exit
    # makes Python forget the warnings it has shown (each of a script's warnings printed again per such call)
    cases = [((1,), 0, 1), ((2,), None, 3), ((2,), None, 2), ((0, 3), 0, 1), ((0, 3), 1, 1), ((3, 1), 1, 1),
             ((2, 2), (0, 1), 5), ((0,), None, 0)]
    for shape, dim, correction in cases:
        for dtype in ("float32", "float64", "float16"):
            for keepdim in (False, True):
                a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 1
                kw = {} if op == "mean" else {"correction": correction}
                kw.update({} if dim is None else {"dim": dim, "keepdim": keepdim})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got, want = getattr(minigrad.tensor(a), op)(**kw), getattr(torch.tensor(a), op)(**kw)
                assert str(got.dtype)[9:] == str(want.dtype)[6:] and tuple(got.shape) == tuple(want.shape)
                assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True), (shape, kw, dtype)
    registry = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for _ in range(2):
            warnings.warn_explicit("shown once", DeprecationWarning, "script.py", 7, registry=registry)
            getattr(minigrad.ones(0 if op == "mean" else 1), op)(0)  # nothing to average, no dof left
    assert [str(w.message) for w in seen if w.category is DeprecationWarning] == ["shown once"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, None), (None, -0.0), (2.0, -2.0)])
def test_clamp_gradient_is_the_upstream_one_or_plus_zero_bit_for_bit(torch, dtype, bounds):
    # the array path selects on the bits (pick): an inf or NaN upstream where the input is clamped gives +0.0, a -0.0
    # one passes as -0.0, and an upstream that is a broadcast view (a sum's) reads right
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(4000) * 2).astype(dtype)
    a[:6] = [np.nan, np.inf, -np.inf, -0.0, 1.0, -1.0]
    g = rng.standard_normal(4000).astype(dtype)
    g[6:12] = [np.inf, -np.inf, np.nan, -0.0, np.inf, np.nan]
    lo, hi = bounds
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    x.clamp(lo, hi).backward(minigrad.tensor(g))
    tx.clamp(lo, hi).backward(torch.tensor(g))
    assert x.grad.dtype == getattr(minigrad, np.dtype(dtype).name)
    assert np.array_equal(x.grad.array.view(np.uint8), tx.grad.numpy().view(np.uint8))  # the bits, signs of 0 too
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    x.clamp(lo, hi).sum().backward()
    tx.clamp(lo, hi).sum().backward()
    assert np.array_equal(x.grad.array.view(np.uint8), tx.grad.numpy().view(np.uint8))
    assert x.clamp(lo, hi).grad_fn.name() == tx.clamp(lo, hi).grad_fn.name()


@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), ((0, 2), False), (None, False)])
def test_norm_gradient_is_pytorchs_bit_for_bit_zero_vectors_and_infs_too(torch, dim, keepdim):
    # (a / n) g, the order PyTorch rounds in, 0 for a vector of zeros; the array path and the recorded one agree
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 3, 5)).astype(np.float32)
    a[0] = 0.0
    a[1, 1, 1] = np.inf
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x.norm(dim=dim, keepdim=keepdim), tx.norm(dim=dim, keepdim=keepdim)
    assert np.array_equal(y.array, ty.detach().numpy())  # (small rows: one summation order; the gradients then agree)
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    assert y.grad_fn.name() == ty.grad_fn.name() and x.grad.dtype == minigrad.float32
    assert np.array_equal(x.grad.array, tx.grad.numpy(), equal_nan=True)
    _, plain, recorded = _grads(lambda t: t.norm(dim=dim, keepdim=keepdim), a, g)
    assert np.array_equal(plain, recorded, equal_nan=True)


RESULT_SAVERS = {  # op -> its backward's formula on arrays, in the steps PyTorch's formula names
    "tanh": lambda g, r: g * (1.0 - r * r), "sigmoid": lambda g, r: g * (r * (1.0 - r)),
    "exp": lambda g, r: g * r, "relu": lambda g, r: np.where(r <= 0, r.dtype.type(0), g),
}


@pytest.mark.parametrize("shape", [(), (7,), (3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(RESULT_SAVERS))
def test_a_saved_outputs_backward_on_arrays_is_the_formulas_bits(name, dtype, shape):
    # the backward reads the saved output's array (no Tensor made) and computes into fresh arrays
    rng = np.random.default_rng(4)
    a, g = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    out, plain, recorded = _grads(lambda x: getattr(x, name)(), a, g)
    want = np.asarray(RESULT_SAVERS[name](g, out))
    assert plain.dtype == want.dtype and plain.shape == want.shape and type(plain) is np.ndarray
    np.testing.assert_array_equal(plain, want)
    np.testing.assert_array_equal(plain, recorded)


@pytest.mark.parametrize("name", sorted(RESULT_SAVERS))
def test_a_saved_output_modified_in_place_raises_as_torch_on_the_array_path(torch, name):
    texts = []
    for lib in (minigrad, torch):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = getattr(x, name)()
        y.mul_(2)
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        texts.append(str(err.value).replace("minigrad.", "torch.").split(" Hint:")[0])
    assert texts[0] == texts[1]
    with minigrad.autograd.graph.saved_tensors_hooks(lambda t: t.array.copy(), lambda a: minigrad.tensor(a)):
        x = minigrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = getattr(x, name)()
    y.sum().backward()  # (a hook's packed output: unpacked for the array path)
    r = getattr(x.detach(), name)().numpy()
    np.testing.assert_array_equal(x.grad.numpy(), RESULT_SAVERS[name](np.ones(3, np.float32), r))


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 70)])
def test_a_gradient_summed_to_a_zero_dim_shape_is_the_general_sums_bits(shape):
    from minigrad.ops._util import _broadcast_dims, add_reduce, sum_to_array

    g = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    got = sum_to_array(g, ())
    want = add_reduce(g, _broadcast_dims(g.shape, ()), True).reshape(()) if shape else g
    assert got.shape == () and got.dtype == g.dtype
    np.testing.assert_array_equal(got, want)
    b = minigrad.tensor(1.5, requires_grad=True)
    (b * minigrad.tensor(g)).sum().backward()  # (a 0-d parameter's gradient goes through it)
    np.testing.assert_array_equal(b.grad.numpy(), sum_to_array(g, ()))


@pytest.mark.parametrize("shape, to", [((32, 128), (128,)), ((16, 32, 64), (64,)), ((300, 64), (64,)),
                                       ((2, 3, 4), (3, 4)), ((5, 2, 3), (2, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_bias_gradient_summed_over_leading_dims_is_the_general_sums_bits(torch, shape, to, dtype):
    from minigrad.ops._util import _broadcast_dims, add_reduce, sum_to_array

    g = np.random.default_rng(6).standard_normal(shape).astype(dtype)
    got = sum_to_array(g, to)
    want = add_reduce(g, _broadcast_dims(g.shape, to), True).reshape(to)  # (the general steps: kept dims, reshaped)
    assert got.shape == to and got.dtype == g.dtype
    np.testing.assert_array_equal(got, want)
    b = minigrad.tensor(np.zeros(to, dtype), requires_grad=True)
    (minigrad.tensor(g) + b).backward(minigrad.tensor(g))  # (a broadcast bias's gradient goes through it)
    tb = torch.zeros(to, dtype=getattr(torch, np.dtype(dtype).name), requires_grad=True)
    (torch.from_numpy(g) + tb).backward(torch.from_numpy(g))
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-4)
    assert b.grad.dtype == (minigrad.float32 if dtype == np.float32 else minigrad.float64)
